/** Telegram's message length, and the kit's splitting and commands under their old names. */
import { splitMessage as split } from "../kit/split-message.js";
import { TELEGRAM_MESSAGE_LIMIT } from "./telegram-platform.js";

export { type ChatCommand, parseCommand } from "../kit/chat-commands.js";
export { TELEGRAM_MESSAGE_LIMIT };

/** `splitMessage` at Telegram's limit unless told another. */
export function splitMessage(text: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  return split(text, limit);
}
