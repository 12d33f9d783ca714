import type { UserContentBlock } from "./attached-images.js";
import { wrapExternalContent } from "./external-content.js";
import { isRecord } from "./turn-result.js";

/**
 * A user message line; the text is fenced as external content unless it is a `command`. With
 * `blocks` (a message's images, see `imageBlocks`) its content is the text's block, then them.
 */
export function userLine(
  text: string,
  uuid: string,
  command = false,
  blocks: readonly UserContentBlock[] = [],
): Record<string, unknown> {
  const said = command ? text : wrapExternalContent(text);
  return {
    type: "user",
    message: {
      role: "user",
      content: blocks.length === 0 ? said : [{ type: "text", text: said }, ...blocks],
    },
    parent_tool_use_id: null,
    uuid,
  };
}

/** The text a user line says: its content, or its content's first block's. */
export function userLineText(line: Record<string, unknown>): string {
  const content = (line.message as { content: unknown }).content;
  if (typeof content === "string") return content;
  const first = Array.isArray(content) ? content[0] : undefined;
  return isRecord(first) && typeof first.text === "string" ? first.text : "";
}

/** Whether the CLI's stderr says `--resume` named a session it does not know. */
export function saysMissingSession(stderrLines: readonly string[]): boolean {
  return stderrLines.some((line) => line.includes("No conversation found"));
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
