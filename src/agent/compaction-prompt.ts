/**
 * The words of a compaction: the request for a structured summary, and the user message
 * that carries the summary (and the user's own earlier messages, word for word) at the
 * head of the compacted conversation.
 */

/** Starts the head message of a compacted conversation; how a summary is recognised. */
export const SUMMARY_OPENING =
  "This session continues an earlier conversation that was compacted to fit the context window.";

export function summaryRequest(focus: string | undefined): string {
  const lines = [
    "Your context window is nearly full. Stop the task for a moment and write a summary of the whole conversation above, so that you can carry on from it with nothing else. Do not call any tools: answer with text only.",
    "",
    "Use these sections, in this order, and leave none out (write 'none' where one is empty):",
    "1. Goal: what the user wants in the end.",
    "2. User instructions: every instruction, constraint, preference and fact the user gave, quoted word for word, each on its own line.",
    "3. Decisions: what was decided and why.",
    "4. Files: each file read, created or changed, with what was done to it.",
    "5. Errors: each error met and how it was fixed (or that it was not).",
    "6. Pending: work asked for and not done yet.",
    "7. Current step: what you were doing just now and what comes next.",
    "",
    "Keep exact names: paths, commands, identifiers, numbers, error messages. An earlier summary at the start of the conversation must be carried over in full, its quoted instructions included.",
  ];
  if (focus !== undefined && focus.trim() !== "") {
    lines.push("", `The user asks this summary to focus on: ${focus.trim()}`);
  }
  return lines.join("\n");
}

/** The head of a compacted conversation: the summary, then the user's pinned messages. */
export function summaryMessageText(summary: string, pinned: readonly string[]): string {
  const parts = [SUMMARY_OPENING, "", "<summary>", summary.trim(), "</summary>"];
  if (pinned.length > 0) {
    parts.push(
      "",
      "The user's own messages from that part of the conversation, word for word:",
      "<user_messages>",
      ...pinned.map((text) => `<message>\n${text}\n</message>`),
      "</user_messages>",
    );
  }
  parts.push(
    "",
    "Continue from where the conversation left off, without asking the user to repeat anything.",
  );
  return parts.join("\n");
}
