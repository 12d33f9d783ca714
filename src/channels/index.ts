/**
 * The chat platforms a gateway can answer on, each a `ChannelSource` (`rudder/channels`), and
 * the chat kit they are built on (`ChatSource` over a `ChatPlatform`), for another platform.
 */
export type { Backoff } from "./kit/backoff.js";
export type {
  Attachment,
  Button,
  ButtonPress,
  ChatPlatform,
  IncomingChat,
  OutgoingChat,
  PlatformFailure,
  PlatformHandlers,
  PlatformLimits,
} from "./kit/chat-platform.js";
export { type AttachmentHandler, ChatSource } from "./kit/chat-source.js";
export type { ChatSourceOptions, ChatSourceSettings } from "./kit/chat-source-options.js";
export { memorySourceStore } from "./kit/memory-source-store.js";
export {
  DEFAULT_TELEGRAM_API_URL,
  TelegramApi,
  TelegramApiError,
} from "./telegram/telegram-api.js";
export { type TelegramConfig, telegramConfig } from "./telegram/telegram-config.js";
export { TelegramPlatform } from "./telegram/telegram-platform.js";
export {
  TELEGRAM_CHANNEL_PREFIX,
  TelegramChannelSource,
  type TelegramSourceOptions,
} from "./telegram/telegram-source.js";
