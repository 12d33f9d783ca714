import { isAbsolute, posix } from "node:path";
import * as v from "valibot";
import { toolJsonSchema } from "./json-schema.js";
import type { AnyTool, Tool, ToolResult } from "./types.js";

/**
 * Which names and input shapes the model and the host see for the five built-in tools:
 * rudder's (`bash`, `read_file {path}`, ...) or Claude Code's (`Bash`, `Read {file_path}`, ...).
 */
export type ToolSurface = "rudder" | "claude";

export const TOOL_SURFACES: readonly ToolSurface[] = ["rudder", "claude"];

const filePath = v.pipe(
  v.string(),
  v.minLength(1),
  v.description("The absolute path of the file (a path relative to the workspace works too)."),
);

type Entries = Record<string, v.GenericSchema>;

/** One of Claude Code's built-in tools: its name and input, and the rudder tool that serves it. */
interface ClaudeToolSpec {
  name: string;
  serves: string;
  /** The input schema, from the fields of the rudder tool's (reused where they coincide). */
  // biome-ignore lint/suspicious/noExplicitAny: each spec's schema has its own input type
  schema(rudder: Entries): v.GenericSchema<unknown, any>;
  toRudder(input: Record<string, unknown>): Record<string, unknown>;
}

/** The fields of `input` that are set, under rudder's names (`[rudder, claude]` pairs). */
function renamed(
  input: Record<string, unknown>,
  fields: readonly (readonly [string, string])[],
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [rudderField, claudeField] of fields) {
    if (input[claudeField] !== undefined) result[rudderField] = input[claudeField];
  }
  return result;
}

/** Claude Code 2.1.328's input schemas (name, fields, which are required), served by rudder's tools. */
const CLAUDE_TOOLS: readonly ClaudeToolSpec[] = [
  {
    name: "Bash",
    serves: "bash",
    schema: (rudder) =>
      v.object({
        command: v.pipe(v.string(), v.minLength(1), v.description("The command to execute")),
        timeout: field(rudder, "timeout"),
        description: v.optional(
          v.pipe(v.string(), v.description("Clear, concise description of what this command does")),
        ),
        run_in_background: field(rudder, "run_in_background"),
      }),
    toRudder: (input) =>
      renamed(input, [
        ["command", "command"],
        ["timeout", "timeout"],
        ["run_in_background", "run_in_background"],
      ]),
  },
  {
    name: "Read",
    serves: "read_file",
    schema: (rudder) =>
      v.object({
        file_path: filePath,
        offset: v.optional(
          v.pipe(
            v.number(),
            v.integer(),
            v.minValue(0),
            v.description(
              "The line number to start reading from (1-based; 0 reads from the start).",
            ),
          ),
        ),
        limit: field(rudder, "limit"),
      }),
    toRudder: (input) => {
      const result = renamed(input, [
        ["path", "file_path"],
        ["limit", "limit"],
      ]);
      if (typeof input.offset === "number" && input.offset > 0) result.offset = input.offset;
      return result;
    },
  },
  {
    name: "Write",
    serves: "write_file",
    schema: (rudder) => v.object({ file_path: filePath, content: field(rudder, "content") }),
    toRudder: (input) =>
      renamed(input, [
        ["path", "file_path"],
        ["content", "content"],
      ]),
  },
  {
    name: "Edit",
    serves: "edit_file",
    schema: () =>
      v.object({
        file_path: filePath,
        old_string: v.pipe(v.string(), v.description("The text to replace")),
        new_string: v.pipe(v.string(), v.description("The text to replace it with")),
        replace_all: v.optional(
          v.pipe(
            v.boolean(),
            v.description("Replace all occurrences of old_string (default false)"),
          ),
        ),
      }),
    toRudder: (input) =>
      renamed(input, [
        ["path", "file_path"],
        ["old_text", "old_string"],
        ["new_text", "new_string"],
        ["replace_all", "replace_all"],
      ]),
  },
  {
    name: "Glob",
    serves: "glob",
    schema: (rudder) =>
      v.object({
        pattern: field(rudder, "pattern"),
        path: v.optional(
          v.pipe(
            v.string(),
            v.description(
              "The directory to search in (default: the workspace). Omit it for the default.",
            ),
          ),
        ),
      }),
    toRudder: (input) => {
      const pattern = String(input.pattern);
      const base = typeof input.path === "string" && input.path !== "" ? input.path : undefined;
      return {
        pattern: base === undefined || isAbsolute(pattern) ? pattern : posix.join(base, pattern),
      };
    },
  },
];

/** The rudder tool's schema of one field, which the Claude Code tool takes as it is. */
function field(rudder: Entries, name: string): v.GenericSchema {
  const schema = rudder[name];
  if (schema === undefined) throw new Error(`the rudder tool has no field ${name}`);
  return schema;
}

/** rudder's words in a description or message, as Claude Code's surface names them. */
const RENAMES: readonly (readonly [RegExp, string])[] = [
  [/\bread_file\b/g, "Read"],
  [/\bwrite_file\b/g, "Write"],
  [/\bedit_file\b/g, "Edit"],
  [/\bglob\b(?= (?:to|and|for|instead))/g, "Glob"],
  [/\bold_text\b/g, "old_string"],
  [/\bnew_text\b/g, "new_string"],
  [/`path`/g, "`file_path`"],
];

function inClaudeWords(text: string): string {
  return RENAMES.reduce((result, [pattern, word]) => result.replace(pattern, word), text);
}

/** `tool` shown as Claude Code's `spec.name`: the input is renamed, then `tool` runs it. */
function claudeTool(spec: ClaudeToolSpec, tool: AnyTool): AnyTool {
  const schema = spec.schema((tool.inputSchema as { entries?: Entries }).entries ?? {});
  const served: Tool<Record<string, unknown>> = {
    name: spec.name,
    description: inClaudeWords(tool.description),
    inputSchema: schema,
    get jsonSchema() {
      return toolJsonSchema(schema);
    },
    aliasOf: { name: tool.name, input: spec.toRudder },
    ...(tool.warm === undefined ? {} : { warm: () => tool.warm?.() }),
    async execute(input, context): Promise<ToolResult> {
      const result: ToolResult = await tool.execute(spec.toRudder(input), context);
      return result.isError ? { ...result, content: inClaudeWords(result.content) } : result;
    },
  };
  return served;
}

/**
 * The tools as `surface` shows them: unchanged for `rudder`; for `claude`, each of the five
 * built-in tools under Claude Code's name and input schema, served by the same tool (MCP and
 * other tools are left as they are).
 */
export function toolsForSurface(tools: readonly AnyTool[], surface: ToolSurface): AnyTool[] {
  if (surface === "rudder") return [...tools];
  return tools.map((tool) => {
    const spec = CLAUDE_TOOLS.find((candidate) => candidate.serves === tool.name);
    return spec === undefined ? tool : claudeTool(spec, tool);
  });
}

/** The name `surface` shows for one of rudder's tools (`bash` is `Bash` for `claude`). */
export function surfaceToolName(surface: ToolSurface, rudderName: string): string {
  if (surface === "rudder") return rudderName;
  return CLAUDE_TOOLS.find((spec) => spec.serves === rudderName)?.name ?? rudderName;
}

/**
 * The tools without those a bare deny rule names (`--disallowedTools Read` removes `Read`, or
 * rudder's `read_file`, from what the model is offered, as Claude Code removes it), under
 * either surface's name. Rules with a specifier only judge calls.
 */
export function withoutDeniedTools(tools: readonly AnyTool[], deny: readonly string[]): AnyTool[] {
  const denied = new Set(deny.map((rule) => rule.trim()));
  return tools.filter((tool) => {
    const rudderName = tool.aliasOf?.name ?? tool.name;
    const names = [tool.name, rudderName, surfaceToolName("claude", rudderName)];
    return !names.some((name) => denied.has(name));
  });
}
