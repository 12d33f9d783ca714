/**
 * Chats on Telegram through the chat kit while everything fails: `chats` private chats each
 * write `perChat` messages one after another (each waits for its answer, up to a minute) to a
 * `rudder serve` whose Telegram source talks to the fake Bot API and whose agents talk to the
 * fake Messages API; the Bot API fails one call in ten (a 502 or a dropped connection) and the
 * gateway is SIGKILLed `kills` times mid-run and started again on the same data. Counts: every
 * message answered, every answer delivered, none twice except those the ledger marked
 * "recovered, may repeat" (counted), and how long the slowest answer took.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { echoFallback, startFakeMessagesApi } from "../../test/helpers/fake-messages-api.js";
import { startFakeTelegramApi } from "../../test/helpers/fake-telegram-api.js";
import { type RudderRun, startRudder, stopRudder } from "../../test/helpers/rudder-cli.js";
import { type Figure, figure, poll } from "./figures.js";

export interface TelegramChatsOptions {
  root: string;
  chats: number;
  perChat: number;
  kills: number;
  failRate: number;
}

export async function telegramChats(options: TelegramChatsOptions): Promise<Figure[]> {
  const name = "Telegram chats";
  const folder = join(options.root, "telegram-chats");
  mkdirSync(join(folder, "workspace"), { recursive: true });
  mkdirSync(join(folder, "home"), { recursive: true });
  const messagesApi = await startFakeMessagesApi({ fallback: echoFallback });
  const telegram = await startFakeTelegramApi();
  writeFileSync(join(folder, "bot-token"), `${telegram.token}\n`, { mode: 0o600 });
  const users = Array.from({ length: options.chats }, (_, index) => 5001 + index);
  const logs: string[] = [];
  const start = async (): Promise<RudderRun> => {
    const run = startRudder(
      [
        ...["serve", "--port", "0", "--data", join(folder, "data")],
        ...["--telegram-token-file", join(folder, "bot-token")],
        ...["--telegram-allow", users.join(",")],
      ],
      {
        cwd: join(folder, "workspace"),
        env: {
          PATH: process.env.PATH,
          HOME: join(folder, "home"),
          RUDDER_MAX_RETRIES: "0",
          ANTHROPIC_BASE_URL: messagesApi.url,
          ANTHROPIC_API_KEY: "dummy",
          RUDDER_TELEGRAM_API_URL: telegram.url,
        },
      },
    );
    await poll(() => /polling as @/.test(run.stderr()), 60_000);
    return run;
  };
  let gateway = await start();
  telegram.failRate(options.failRate);
  const answers = (marker: string) =>
    telegram.sent.filter(
      (message) => message.text.startsWith("echo:") && message.text.includes(marker),
    );
  const started = Date.now();
  let slowest = 0;
  let chatting = true;
  const chat = async (user: number) => {
    for (let index = 0; index < options.perChat; index++) {
      const marker = `u${user}m${index}z`;
      const sentAt = Date.now();
      telegram.pushMessage({ userId: user, text: `chaos ${marker}` });
      await poll(() => answers(marker).length > 0, 90_000).catch(() => undefined);
      slowest = Math.max(slowest, Date.now() - sentAt);
    }
  };
  const killer = async () => {
    const every = 4000;
    for (let kill = 0; kill < options.kills && chatting; kill++) {
      await new Promise((resolve) => setTimeout(resolve, every));
      if (!chatting) break;
      logs.push(gateway.stderr());
      gateway.kill("SIGKILL");
      await gateway.exited;
      gateway = await start();
    }
  };
  const killing = killer();
  await Promise.all(users.map((user) => chat(user)));
  chatting = false;
  await killing;
  const markers = users.flatMap((user) =>
    Array.from({ length: options.perChat }, (_, index) => `u${user}m${index}z`),
  );
  // What is answered late (a resend after the last restart) has a moment to arrive.
  await poll(() => markers.every((marker) => answers(marker).length > 0), 30_000).catch(
    () => undefined,
  );
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await stopRudder(gateway);
  logs.push(gateway.stderr());
  const counts = markers.map((marker) => answers(marker).length);
  const mayRepeat = logs.join("\n").match(/recovered, may repeat/g)?.length ?? 0;
  const twice = counts.filter((count) => count > 1).length;
  await telegram.close();
  await messagesApi.close();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  return [
    figure(
      name,
      `messages (${options.chats} chats, ${options.kills} kills, 1 in ${Math.round(1 / options.failRate)} Bot API calls failing)`,
      markers.length,
    ),
    figure(
      name,
      "answered and delivered",
      counts.filter((count) => count > 0).length,
      String(markers.length),
      counts.every((count) => count > 0),
    ),
    figure(
      name,
      "lost (never delivered)",
      counts.filter((count) => count === 0).length,
      "0",
      counts.every((count) => count > 0),
    ),
    figure(name, "delivered twice", twice, `<= may repeat (${mayRepeat})`, twice <= mayRepeat),
    figure(name, "sends marked recovered, may repeat", mayRepeat),
    figure(name, "slowest answer", `${(slowest / 1000).toFixed(1)} s`),
    figure(name, "run time", `${seconds} s`),
  ];
}
