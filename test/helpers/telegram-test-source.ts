/**
 * What the chat media tests share: a Telegram source on a fake Bot API (polling each second,
 * one chat allowed, its update offsets kept under `stateRoot`), and a one-pixel PNG to send.
 */
import { join } from "node:path";
import { TelegramChannelSource } from "../../src/channels/telegram/telegram-source.js";
import type { FakeTelegramApi } from "./fake-telegram-api.js";

/** A 1x1 PNG. */
export const ONE_PIXEL_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** A source on `bot` taking chat `allow` only, its offsets in `stateRoot/offsets-<allow>`. */
export function telegramTestSource(
  bot: FakeTelegramApi,
  allow: string,
  stateRoot: string,
): TelegramChannelSource {
  return new TelegramChannelSource({
    token: bot.token,
    apiUrl: bot.url,
    allow: [allow],
    pollTimeoutSeconds: 1,
    stateDir: join(stateRoot, `offsets-${allow}`),
  });
}
