/**
 * Chats on Telegram through the chat kit while everything fails (the kit's chaos scenario,
 * `chat-chaos.ts`): `chats` private chats, each a person writing `perChat` messages, to a
 * `rudder serve` whose Telegram source long-polls the fake Bot API; the Bot API fails one call
 * in ten (a 502 or a dropped connection) and the gateway is SIGKILLed `kills` times mid-run.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeTelegramApi } from "../../test/helpers/fake-telegram-api.js";
import { chatChaos } from "./chat-chaos.js";
import type { Figure } from "./figures.js";

export interface TelegramChatsOptions {
  root: string;
  chats: number;
  perChat: number;
  kills: number;
  failRate: number;
}

export function telegramChats(options: TelegramChatsOptions): Promise<Figure[]> {
  return chatChaos({
    name: "Telegram chats",
    root: options.root,
    conversations: options.chats,
    perConversation: options.perChat,
    kills: options.kills,
    failRate: options.failRate,
    words: {
      messages: `${options.chats} chats, ${options.kills} kills, 1 in ${Math.round(1 / options.failRate)} Bot API calls failing`,
      answered: "answered and delivered",
      lost: "lost (never delivered)",
      twice: "delivered twice",
    },
    platform: async (folder) => {
      const telegram = await startFakeTelegramApi();
      writeFileSync(join(folder, "bot-token"), `${telegram.token}\n`, { mode: 0o600 });
      const user = (chat: number) => 5001 + chat;
      const users = Array.from({ length: options.chats }, (_, chat) => user(chat));
      return {
        serveArgs: [
          ...["--telegram-token-file", join(folder, "bot-token")],
          ...["--telegram-allow", users.join(",")],
        ],
        env: { RUDDER_TELEGRAM_API_URL: telegram.url },
        ready: /polling as @/,
        failRate: (rate) => telegram.failRate(rate),
        source: "telegram",
        say: (chat, _index, marker) => {
          telegram.pushMessage({ userId: user(chat), text: `chaos ${marker}` });
          return {};
        },
        // A private chat's id is its person's: an answer to the chat is the answer.
        answers: (_chat, marker) =>
          telegram.sent.filter(
            (message) => message.text.startsWith("echo:") && message.text.includes(marker),
          ).length,
        close: () => telegram.close(),
      };
    },
  });
}
