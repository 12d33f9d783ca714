/**
 * Telegram's updates as the chat kit reads them: a message as an `IncomingChat` (its channel
 * `telegram:<chat id>`, or `telegram:<chat id>:<topic id>` in a forum topic; who sent it;
 * whether it addresses the bot; its files), a callback query as a `ButtonPress`.
 */
import type { Attachment, ButtonPress, IncomingChat } from "../kit/chat-platform.js";
import type {
  TelegramCallbackQuery,
  TelegramFile,
  TelegramMessage,
  TelegramUser,
} from "./telegram-api.js";

/** Channels of this source are `telegram:<chat id>[:<topic id>]`. */
export const TELEGRAM_CHANNEL_PREFIX = "telegram:";

export interface TelegramBot {
  id: number;
  username: string;
}

/** The largest photo size taken: what the model is shown as an image at most. */
const PHOTO_BYTES = 3_750_000;

/** Downloads a file by its id (the platform's `getFile`, then the file URL). */
export type FetchFile = (fileId: string, signal: AbortSignal) => Promise<Buffer>;

export function channelOf(message: TelegramMessage): string {
  const topic =
    message.is_topic_message && message.message_thread_id !== undefined
      ? `:${message.message_thread_id}`
      : "";
  return `${TELEGRAM_CHANNEL_PREFIX}${message.chat.id}${topic}`;
}

/** The chat and topic of a channel id; null for another source's channel. */
export function addressOf(channelId: string): { chatId: string; topic?: number } | null {
  if (!channelId.startsWith(TELEGRAM_CHANNEL_PREFIX)) return null;
  const [chatId = "", topic] = channelId.slice(TELEGRAM_CHANNEL_PREFIX.length).split(":");
  return topic === undefined ? { chatId } : { chatId, topic: Number(topic) };
}

export function nameOf(user: TelegramUser | undefined): string {
  if (user === undefined) return "someone";
  const first = user.first_name ?? "";
  const handle = user.username ? `@${user.username}` : "";
  return first && handle ? `${first} (${handle})` : first || handle || `user ${user.id}`;
}

function attachment(kind: Attachment["kind"], file: TelegramFile, fetch: FetchFile): Attachment {
  return {
    kind,
    name: file.file_name,
    mimeType: file.mime_type,
    size: file.file_size,
    fetch: (signal) => fetch(file.file_id, signal),
  };
}

function attachmentsOf(message: TelegramMessage, fetch: FetchFile): Attachment[] {
  const files: Attachment[] = [];
  // Telegram sends a photo in several sizes, smallest first: the largest the model is shown
  // whole (the gateway's image cap, 3.75 MB), else the smallest.
  const sizes = message.photo ?? [];
  const photo = sizes.filter((size) => (size.file_size ?? 0) <= PHOTO_BYTES).at(-1) ?? sizes.at(0);
  if (photo) files.push(attachment("photo", photo, fetch));
  if (message.document) files.push(attachment("document", message.document, fetch));
  if (message.voice) files.push(attachment("voice", message.voice, fetch));
  if (message.audio) files.push(attachment("audio", message.audio, fetch));
  if (message.video) files.push(attachment("video", message.video, fetch));
  return files;
}

/** Mentioned by @name, a reply to one of its messages, or a command (for it, or for any bot). */
function addresses(message: TelegramMessage, text: string, bot: TelegramBot | undefined): boolean {
  if (message.chat.type === "private") return true;
  if (/^\/[A-Za-z0-9_]/.test(text)) {
    const target = /^\/[A-Za-z0-9_]+@([A-Za-z0-9_]+)/.exec(text)?.[1];
    return target === undefined || target.toLowerCase() === bot?.username.toLowerCase();
  }
  if (bot === undefined) return false;
  if (bot.username && text.toLowerCase().includes(`@${bot.username.toLowerCase()}`)) return true;
  return message.reply_to_message?.from?.id === bot.id;
}

export function incomingOf(
  message: TelegramMessage,
  bot: TelegramBot | undefined,
  fetch: FetchFile,
): IncomingChat {
  const chatId = String(message.chat.id);
  const userId = message.from === undefined ? undefined : String(message.from.id);
  const text = message.text ?? message.caption ?? "";
  const group = message.chat.type !== "private";
  return {
    channelId: channelOf(message),
    chatId,
    userId,
    userName: nameOf(message.from),
    text,
    messageId: String(message.message_id),
    deliveryKey: `${chatId}:${message.message_id}`,
    group,
    addressed: addresses(message, text, bot),
    replyTo:
      message.reply_to_message === undefined
        ? undefined
        : String(message.reply_to_message.message_id),
    attachments: attachmentsOf(message, fetch),
    meta: {
      source: "telegram",
      chatId,
      ...(userId === undefined ? {} : { userId }),
      messageId: message.message_id,
      // The page names the channel so: a group's title, a private chat's person.
      chatTitle: message.chat.title ?? (group ? undefined : nameOf(message.from)),
    },
  };
}

export function pressOf(query: TelegramCallbackQuery): ButtonPress | null {
  const message = query.message;
  if (message === undefined || query.data === undefined) return null;
  return {
    channelId: channelOf(message),
    chatId: String(message.chat.id),
    userId: String(query.from.id),
    userName: nameOf(query.from),
    data: query.data,
    pressId: query.id,
    messageId: String(message.message_id),
  };
}
