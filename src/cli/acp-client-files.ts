import { existsSync } from "node:fs";
import type { ClientFileAccess } from "../acp/rudder-acp-agent.js";
import { DEFAULT_READ_LINES } from "../tools/read-file-tool.js";
import type { AnyTool, ToolResult } from "../tools/types.js";
import { resolveInWorkspace } from "../tools/workspace-path.js";

function failure(error: unknown): ToolResult {
  const message = error instanceof Error ? error.message : String(error);
  return { content: `The editor could not do it: ${message}`, isError: true };
}

/** Reads through the editor: the path is still confined to the workspace. */
function readThrough(tool: AnyTool, files: ClientFileAccess): AnyTool {
  return {
    ...tool,
    async execute(input, context): Promise<ToolResult> {
      const own = (tool.aliasOf?.input(input) ?? input) as {
        path: string;
        offset?: number;
        limit?: number;
      };
      const resolved = resolveInWorkspace(context.workspace, own.path);
      if (!resolved.ok) return { content: resolved.error, isError: true };
      const limit = own.limit ?? DEFAULT_READ_LINES;
      try {
        const content = await files.read(resolved.path, own.offset, limit);
        const lines = content === "" ? 0 : content.replace(/\n$/, "").split("\n").length;
        return {
          content: content === "" ? "(empty file)" : content,
          isError: false,
          details: {
            tool: "read",
            path: resolved.path,
            content,
            startLine: own.offset ?? 1,
            numLines: lines,
            totalLines: (own.offset ?? 1) - 1 + lines,
          },
        };
      } catch (error) {
        return failure(error);
      }
    },
  };
}

/** Writes through the editor (which may show or save them as it likes). */
function writeThrough(tool: AnyTool, files: ClientFileAccess): AnyTool {
  return {
    ...tool,
    async execute(input, context): Promise<ToolResult> {
      const own = (tool.aliasOf?.input(input) ?? input) as { path: string; content: string };
      const resolved = resolveInWorkspace(context.workspace, own.path);
      if (!resolved.ok) return { content: resolved.error, isError: true };
      const created = !existsSync(resolved.path);
      try {
        await files.write(resolved.path, own.content);
      } catch (error) {
        return failure(error);
      }
      return {
        content: `${created ? "Created" : "Overwrote"} ${own.path} through the editor.`,
        isError: false,
        details: {
          tool: "write",
          path: resolved.path,
          content: own.content,
          created,
          originalFile: null,
        },
      };
    },
  };
}

/**
 * The tools with reading and writing whole files going through the editor when its client
 * offers `fs` (so the agent sees unsaved buffers and the editor sees its writes); the
 * permission gate and hooks judge the calls as before. Edits stay rudder's own.
 */
export function withClientFiles(tools: readonly AnyTool[], files: ClientFileAccess): AnyTool[] {
  return tools.map((tool) => {
    const name = tool.aliasOf?.name ?? tool.name;
    if (name === "read_file" && files.canRead) return readThrough(tool, files);
    if (name === "write_file" && files.canWrite) return writeThrough(tool, files);
    return tool;
  });
}
