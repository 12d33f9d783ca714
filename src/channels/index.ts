/** The chat platforms a gateway can answer on, each a `ChannelSource` (`rudder/channels`). */
export {
  DEFAULT_TELEGRAM_API_URL,
  TelegramApi,
  TelegramApiError,
} from "./telegram/telegram-api.js";
export { type TelegramConfig, telegramConfig } from "./telegram/telegram-config.js";
export {
  TELEGRAM_CHANNEL_PREFIX,
  TelegramChannelSource,
  type TelegramSourceOptions,
} from "./telegram/telegram-source.js";
