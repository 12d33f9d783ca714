import { isSummaryMessage } from "../agent/compaction-plan.js";
import type { SessionSummary } from "../agent/session-catalog.js";
import type { TranscriptSegment } from "../agent/transcript-store.js";
import type { ContentBlock, Message } from "../model/types.js";
import { formatTokens } from "./chat/chat-format.js";

/**
 * A stored conversation for `rudder sessions show`: for a person (user text after `> `, tool
 * calls and results indented, a divider at each compaction) or as JSON (the messages, with a
 * `compact_boundary` item at each compaction).
 */

const RESULT_WIDTH = 100;
const RULE = "\u2500\u2500";

/** ISO 8601 in UTC to the second: the same text on every machine. */
export function formatTime(date: Date): string {
  return Number.isNaN(date.getTime()) ? "?" : date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Control characters (terminal escapes among them, the C1 ones such as the 8-bit CSI too)
 * become spaces; newlines and tabs stay.
 */
export function printable(text: string): string {
  let out = "";
  for (const character of text) {
    const code = character.charCodeAt(0);
    const control =
      (code < 0x20 && character !== "\n" && character !== "\t") || (code >= 0x7f && code <= 0x9f);
    out += control ? " " : character;
  }
  return out;
}

/** One line, at most `width` characters (code points, so no pair is cut in half). */
export function oneLine(text: string, width: number): string {
  const characters = [...printable(text).replace(/\s+/g, " ").trim()];
  if (characters.length <= width) return characters.join("");
  return `${characters.slice(0, width - 3).join("")}...`;
}

/** A tool call as `name(summary)`: its main argument when it has one, else its input as JSON. */
function toolCallLine(name: string, input: Record<string, unknown>): string {
  const main = ["command", "path", "file_path", "pattern", "url", "query"]
    .map((key) => input[key])
    .find((value) => typeof value === "string");
  const summary = typeof main === "string" ? main : JSON.stringify(input);
  return `${printable(name)}(${oneLine(summary, RESULT_WIDTH)})`;
}

function toolResultLine(content: string, isError: boolean): string {
  const lines = content.split("\n").filter((line) => line.trim() !== "");
  const first = lines[0] === undefined ? "(empty)" : oneLine(lines[0], RESULT_WIDTH);
  const more = lines.length > 1 ? ` (+${lines.length - 1} lines)` : "";
  return `${isError ? "error: " : ""}${first}${more}`;
}

function blockLines(role: Message["role"], block: ContentBlock): string[] {
  if (block.type === "tool_use") return [`  * ${toolCallLine(block.name, block.input ?? {})}`];
  if (block.type === "tool_result") {
    const content =
      typeof block.content === "string" ? block.content : JSON.stringify(block.content);
    return [`    -> ${toolResultLine(content, block.is_error === true)}`];
  }
  if (block.type === "image") return [role === "user" ? "> [image]" : "[image]"];
  const text = printable(block.text).replace(/\s+$/, "");
  if (text === "") return [];
  return role === "user" ? text.split("\n").map((line) => `> ${line}`) : [text];
}

/** The divider where a compaction replaced what came before it with a summary. */
export function compactionDivider(boundary: NonNullable<TranscriptSegment["boundary"]>): string {
  const when = formatTime(new Date(boundary.at));
  return (
    `${RULE} compacted: ${formatTokens(boundary.preTokens)} -> ${formatTokens(boundary.postTokens)} ` +
    `tokens (${boundary.trigger}, ${when}) ${RULE}`
  );
}

function messageBlocks(message: Message): ContentBlock[] {
  return typeof message.content === "string"
    ? [{ type: "text", text: message.content }]
    : message.content;
}

/** The conversation for a person: `> ` before user text, tool calls and results indented. */
export function formatTranscript(
  summary: SessionSummary,
  segments: readonly TranscriptSegment[],
): string {
  const counts = [`${summary.messages} message${summary.messages === 1 ? "" : "s"}`];
  if (summary.compactions > 0) {
    counts.push(`${summary.compactions} compaction${summary.compactions === 1 ? "" : "s"}`);
  }
  const out = [
    `session ${summary.id} (${counts.join(", ")})`,
    `folder  ${printable(summary.cwd)}`,
    `started ${formatTime(new Date(summary.createdAt))}, last modified ${formatTime(summary.updatedAt)}`,
  ];
  let previous: "text" | "tool" | undefined;
  for (const segment of segments) {
    if (segment.boundary !== undefined) {
      out.push("", compactionDivider(segment.boundary));
      previous = undefined;
    }
    for (const message of segment.messages) {
      let blocks = messageBlocks(message);
      if (isSummaryMessage(message)) {
        const lines = blocks[0]?.type === "text" ? blocks[0].text.split("\n").length : 0;
        out.push("", `(the summary that replaced it: ${lines} line${lines === 1 ? "" : "s"})`);
        blocks = blocks.slice(1);
        previous = "text";
      }
      for (const block of blocks) {
        const lines = blockLines(message.role, block);
        if (lines.length === 0) continue;
        const kind = block.type === "text" ? "text" : "tool";
        if (kind === "text" || previous !== "tool") out.push("");
        out.push(...lines);
        previous = kind;
      }
    }
  }
  return `${out.join("\n")}\n`;
}

/** The JSON of `sessions show --json`: every message, oldest first, a boundary item at each compaction. */
export function transcriptJson(segments: readonly TranscriptSegment[]): unknown[] {
  return segments.flatMap((segment) => {
    const boundary = segment.boundary;
    if (boundary === undefined) return segment.messages;
    const { trigger, preTokens, postTokens, durationMs, at } = boundary;
    return [
      { type: "compact_boundary", trigger, preTokens, postTokens, durationMs, at },
      ...segment.messages,
    ];
  });
}
