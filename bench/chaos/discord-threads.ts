/**
 * Threads and DMs on Discord through the chat kit while everything fails (the kit's chaos
 * scenario, `chat-chaos.ts`): `conversations` conversations, every other one a thread opened by
 * a mention in a channel and continued without one, the others DMs, to a `rudder serve` whose
 * Discord source talks to the fake Discord (discord.js unchanged); the REST API fails one call
 * in ten (a 429 with `retry_after` or a 500), the gateway's socket is dropped now and then
 * (discord.js resumes the session) and the gateway is SIGKILLed `kills` times mid-answer (what
 * was said meanwhile comes back by the catch-up). An answer counts in its own thread or DM only.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeDiscord } from "../../test/helpers/fake-discord.js";
import { chatChaos } from "./chat-chaos.js";
import type { Figure } from "./figures.js";

export interface DiscordThreadsOptions {
  root: string;
  conversations: number;
  perConversation: number;
  kills: number;
  failRate: number;
}

export function discordThreads(options: DiscordThreadsOptions): Promise<Figure[]> {
  const threads = Math.ceil(options.conversations / 2);
  return chatChaos({
    name: "Discord threads",
    root: options.root,
    conversations: options.conversations,
    perConversation: options.perConversation,
    kills: options.kills,
    failRate: options.failRate,
    words: {
      messages: `${threads} threads and ${options.conversations - threads} DMs, ${options.kills} kills and socket drops, 1 in ${Math.round(1 / options.failRate)} REST calls failing`,
      answered: "answered in their thread or DM",
      lost: "lost (never answered)",
      twice: "answered twice",
    },
    platform: async (folder) => {
      const discord = await startFakeDiscord();
      writeFileSync(join(folder, "bot-token"), `${discord.token}\n`, { mode: 0o600 });
      const person = (conversation: number) =>
        String(700_000_000_000_000_000n + BigInt(conversation));
      const people = Array.from({ length: options.conversations }, (_, index) => person(index));
      /** Where each conversation's answers go: the thread (the mention's id) or the DM. */
      const places = new Map<number, string>();
      return {
        serveArgs: [
          ...["--discord-token-file", join(folder, "bot-token")],
          ...["--discord-allow", people.join(",")],
        ],
        env: { RUDDER_DISCORD_API_URL: discord.apiUrl },
        ready: /connected as @/,
        failRate: (rate) => discord.failRate(rate),
        dropConnection: () => discord.gateway.drop(),
        source: "discord",
        say: (conversation, index, marker) => {
          const userId = person(conversation);
          const text = `chaos ${marker}`;
          const heard = discord.gateway.connected() > 0;
          if (conversation % 2 === 1) {
            const dm = discord.dm(userId);
            places.set(conversation, dm);
            return { key: discord.say({ userId, channelId: dm, text }).id, heard, place: dm };
          }
          if (index === 0) {
            const channelId = discord.channelId;
            const id = discord.say({ userId, channelId, text, mention: true }).id;
            places.set(conversation, id);
            return { key: id, heard, place: id };
          }
          const thread = places.get(conversation) as string;
          // A thread never opened (its mention lost) takes no more: the rest count as lost.
          if (!discord.threadsStarted.includes(thread)) return null;
          return { key: discord.say({ userId, channelId: thread, text }).id, heard, place: thread };
        },
        // A bot cannot list its DMs, nor is a mention in a channel read back: a conversation's
        // first message said while the gateway was not connected is never seen.
        unreadableWhileDown: (said) => said.index === 0 && said.heard === false,
        trace: (said) => {
          const place = said.place ?? "";
          const sent = discord.sent.filter((message) => message.channelId === place);
          const calls = discord.calls.filter((call) => call.path.includes(place));
          return [
            `${sent.length} message(s) sent there: ${sent.map((message) => JSON.stringify(message.text.slice(0, 60))).join(", ")}`,
            `thread opened: ${discord.threadsStarted.includes(place)}`,
            `${calls.length} REST call(s) there: ${calls.map((call) => `${call.method} ${call.path} ${call.at - said.time} ms after`).join("; ")}`,
          ];
        },
        answers: (conversation, marker) =>
          discord.sent.filter(
            (message) =>
              message.channelId === places.get(conversation) &&
              message.text.startsWith("echo:") &&
              message.text.includes(marker),
          ).length,
        close: () => discord.close(),
      };
    },
  });
}
