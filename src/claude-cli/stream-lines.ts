import { wrapExternalContent } from "./external-content.js";
import { isRecord } from "./turn-result.js";

/** A user message line; the text is fenced as external content unless it is a `command`. */
export function userLine(text: string, uuid: string, command = false): Record<string, unknown> {
  return {
    type: "user",
    message: { role: "user", content: command ? text : wrapExternalContent(text) },
    parent_tool_use_id: null,
    uuid,
  };
}

/** A `result` saying `--resume` named a session the CLI does not have. */
export function isMissingSession(line: Record<string, unknown>): boolean {
  const errors = Array.isArray(line.errors) ? line.errors : [];
  return (
    line.is_error === true &&
    [...errors, line.result].some(
      (entry) => typeof entry === "string" && entry.includes("No conversation found"),
    )
  );
}

/** The top-level assistant text blocks of an `assistant` line (subagent lines give none). */
export function assistantTexts(line: Record<string, unknown>): string[] {
  if (line.parent_tool_use_id) return [];
  const message = isRecord(line.message) ? line.message : {};
  const content = Array.isArray(message.content) ? message.content : [];
  return content.flatMap((block) =>
    isRecord(block) && block.type === "text" && typeof block.text === "string" ? [block.text] : [],
  );
}
