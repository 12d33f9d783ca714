import type { ContentBlock, ImageBlock, Message } from "../model/types.js";

/**
 * Adds text to the conversation as the user's: appended to the last message
 * when it is the user's (the API wants roles to alternate), otherwise as a
 * new user message. Empty text is never sent.
 */
export function appendUserText(history: Message[], text: string): void {
  if (text.trim() === "") return;
  const last = history.at(-1);
  if (last === undefined || last.role !== "user") {
    history.push({ role: "user", content: text });
    return;
  }
  const block: ContentBlock = { type: "text", text };
  last.content =
    typeof last.content === "string"
      ? [{ type: "text", text: last.content }, block]
      : [...last.content, block];
}

/** Adds images to the user's turn at the end of the history (after its text). */
export function appendUserImages(history: Message[], images: readonly ImageBlock[]): void {
  if (images.length === 0) return;
  const last = history.at(-1);
  if (last === undefined || last.role !== "user") {
    history.push({ role: "user", content: [...images] });
    return;
  }
  last.content =
    typeof last.content === "string"
      ? [{ type: "text", text: last.content }, ...images]
      : [...last.content, ...images];
}

/** The assistant's text blocks of one message, joined. */
export function messageText(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("");
}

/** True when the model must not be called: nothing from the user is waiting. */
export function awaitsUser(history: readonly Message[]): boolean {
  const last = history.at(-1);
  return last === undefined || last.role !== "user";
}
