import type { GenericSchema } from "valibot";

export interface ToolContext {
  /** Absolute, real path of the workspace the tools are confined to. */
  workspace: string;
  /** Aborting ends the tool's work (and kills any process group it started). */
  signal: AbortSignal;
  /**
   * For a file tool's call: the real absolute path the permission gate judged. The tool
   * opens exactly that path (following no link on the way), so what it touches is what was
   * judged, even if a link along the given path changes meanwhile.
   */
  judgedPath?: string;
}

/** A piece of a result the model sees: text, or a base64 image (an MCP tool's picture). */
export type ToolResultPart =
  | { type: "text"; text: string }
  | { type: "image"; mediaType: string; data: string };

/**
 * What one of the built-in tools did, as data (hosts get it in Claude Code's per-tool shapes:
 * a hook's `tool_response`, stream-json's `tool_use_result`). Paths are absolute and real.
 */
export type ToolDetails =
  | { tool: "bash"; output: string; interrupted: boolean; backgroundTaskId?: string }
  | {
      tool: "read";
      path: string;
      /** The lines shown, without rudder's notes. */
      content: string;
      startLine: number;
      numLines: number;
      /** As Claude Code counts them: a file ending in a newline has one more (empty) line. */
      totalLines: number;
    }
  | {
      tool: "write";
      path: string;
      content: string;
      created: boolean;
      /** What an overwritten file held (null when created, or too large to keep). */
      originalFile: string | null;
    }
  | {
      tool: "edit";
      path: string;
      oldText: string;
      newText: string;
      replaceAll: boolean;
      originalFile: string;
      updatedFile: string;
    }
  | { tool: "glob"; filenames: string[]; total: number; durationMs: number };

/** What a tool gives back to the model. Failures are data: `isError: true`. */
export interface ToolResult {
  /** The result as text (what people and hooks are shown). */
  content: string;
  isError: boolean;
  /** When the result holds images: every part in order, sent to the model instead of `content`. */
  parts?: ToolResultPart[];
  /** What a built-in tool did, when it succeeded. */
  details?: ToolDetails;
}

/**
 * A tool is a plain object built by a factory. `inputSchema`, a valibot
 * schema, validates (and strips unknown fields from) the model's input once,
 * in the loop; `jsonSchema` is what the model is shown. `execute` never rejects.
 */
export interface Tool<Input = Record<string, unknown>> {
  name: string;
  description: string;
  inputSchema: GenericSchema<unknown, Input>;
  jsonSchema: Record<string, unknown>;
  execute(input: Input, context: ToolContext): Promise<ToolResult>;
  /**
   * Set on a tool that serves another under a different name and input shape (Claude
   * Code's `Read` serving `read_file`): the permission gate and the background manager
   * judge each call as a call of `name` with `input(input)`, so rules mean the same
   * under either name.
   */
  aliasOf?: { name: string; input(input: Input): Record<string, unknown> };
  /**
   * Called as the model is asked (so possibly many times; cheap after the first): a tool
   * with slow set-up (bash's sandbox) starts it then, overlapping the model's reply.
   */
  warm?(): void;
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous tool list is typed by each tool's own schema
export type AnyTool = Tool<any>;
