import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";

/** How an editor shows one tool call: its kind, a title, the files it touches, an edit's diff. */
export interface ToolCallView {
  kind: ToolKind;
  title: string;
  locations: ToolCallLocation[];
  /** For edits: the change as a diff the editor can show before and after it runs. */
  content: ToolCallContent[];
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function absolute(workspace: string, path: string): string {
  return path.startsWith("/") ? path : `${workspace.replace(/\/$/, "")}/${path}`;
}

/** An edit shown as a diff of `path` (a new file's `oldText` is null). */
function editView(
  title: string,
  workspace: string,
  path: string | undefined,
  oldText: string | null,
  newText: string | undefined,
): ToolCallView {
  if (path === undefined) return { kind: "edit", title, locations: [], content: [] };
  const file = absolute(workspace, path);
  return {
    kind: "edit",
    title,
    locations: [{ path: file }],
    content: [{ type: "diff", path: file, oldText, newText: newText ?? "" }],
  };
}

/**
 * The view of a call to one of the built-in tools, under rudder's names or Claude Code's
 * (or an MCP tool, shown as `other` under its name): `bash` / `Bash` is `execute` titled
 * with its command, `read_file` / `Read` is `read`, the writes and edits are `edit` with
 * a diff, `glob` / `Glob` is `search`.
 */
export function toolCallView(
  name: string,
  input: Record<string, unknown>,
  workspace: string,
): ToolCallView {
  const path = text(input.path) ?? text(input.file_path);
  const locations = path === undefined ? [] : [{ path: absolute(workspace, path) }];
  switch (name) {
    case "bash":
    case "Bash":
      return {
        kind: "execute",
        title: text(input.command) ?? "bash",
        locations: [],
        content: [],
      };
    case "read_file":
    case "Read":
      return { kind: "read", title: `Read ${path ?? "a file"}`, locations, content: [] };
    case "write_file":
    case "Write":
      return editView(`Write ${path ?? "a file"}`, workspace, path, null, text(input.content));
    case "edit_file":
    case "Edit":
      return editView(
        `Edit ${path ?? "a file"}`,
        workspace,
        path,
        text(input.old_text) ?? text(input.old_string) ?? "",
        text(input.new_text) ?? text(input.new_string),
      );
    case "glob":
    case "Glob":
      return {
        kind: "search",
        title: `Find ${text(input.pattern) ?? "files"}`,
        locations,
        content: [],
      };
    default:
      return { kind: "other", title: name, locations: [], content: [] };
  }
}
