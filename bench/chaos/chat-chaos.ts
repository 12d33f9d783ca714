/**
 * The chat kit's chaos scenario, once for every platform: `conversations` conversations each
 * write `perConversation` messages one after another (each waits for its answer, up to a minute
 * and a half) to a `rudder serve` whose chat source talks to the platform's fake and whose agents
 * talk to the fake Messages API (an echo); the fake fails a share of the platform's API calls,
 * and every 4 s (`kills` times) the platform's connection is dropped at the half (when it has
 * one to drop) and the gateway SIGKILLed and started again on the same data. Counts: every
 * message answered in its own conversation, none twice except those the ledger marked
 * "recovered, may repeat" (counted), and how long the slowest answer took. The platform
 * (`ChatChaosPlatform`) says how to start rudder on it, how a person speaks and what an answer is.
 * `CHAOS_LOGS=<file>` keeps the gateways' stderr and the markers never answered there.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { echoFallback, startFakeMessagesApi } from "../../test/helpers/fake-messages-api.js";
import { type RudderRun, startRudder, stopRudder } from "../../test/helpers/rudder-cli.js";
import { type Figure, figure, poll } from "./figures.js";

/** One platform's fake, as the scenario drives it. */
export interface ChatChaosPlatform {
  /** `rudder serve`'s flags for the platform (token files, the allow-list). */
  serveArgs: string[];
  /** The environment's additions (the fake's API URL). */
  env: Record<string, string>;
  /** What the gateway's stderr says once the source receives. */
  ready: RegExp;
  /** The share of API calls that fail from now on. */
  failRate(rate: number): void;
  /** Drops the platform's connection without a goodbye; absent where there is none (polling). */
  dropConnection?(): void;
  /** A person says message `index` of conversation `conversation`, which holds `marker`. */
  say(conversation: number, index: number, marker: string): void;
  /** The answers holding `marker` the bot sent in conversation `conversation`'s place. */
  answers(conversation: number, marker: string): number;
  close(): Promise<void>;
}

export interface ChatChaosOptions {
  /** The scenario's name in the table ("Telegram chats"). */
  name: string;
  root: string;
  conversations: number;
  perConversation: number;
  kills: number;
  failRate: number;
  /** Words of the table's lines: what the first line counts, answered, lost, twice. */
  words: { messages: string; answered: string; lost: string; twice: string };
  /** The platform's fake, started in the scenario's folder. */
  platform(folder: string): Promise<ChatChaosPlatform>;
}

const CYCLE_MS = 4000;

export async function chatChaos(options: ChatChaosOptions): Promise<Figure[]> {
  const { name } = options;
  const folder = join(options.root, name.toLowerCase().replace(/\W+/g, "-"));
  mkdirSync(join(folder, "workspace"), { recursive: true });
  mkdirSync(join(folder, "home"), { recursive: true });
  const messagesApi = await startFakeMessagesApi({ fallback: echoFallback });
  const platform = await options.platform(folder);
  const logs: string[] = [];
  const start = async (): Promise<RudderRun> => {
    const run = startRudder(
      ["serve", "--port", "0", "--data", join(folder, "data"), ...platform.serveArgs],
      {
        cwd: join(folder, "workspace"),
        env: {
          PATH: process.env.PATH,
          HOME: join(folder, "home"),
          RUDDER_MAX_RETRIES: "0",
          ANTHROPIC_BASE_URL: messagesApi.url,
          ANTHROPIC_API_KEY: "dummy",
          ...platform.env,
        },
      },
    );
    await poll(() => platform.ready.test(run.stderr()), 60_000);
    return run;
  };
  let gateway = await start();
  platform.failRate(options.failRate);
  const marker = (conversation: number, index: number) => `c${conversation}m${index}z`;
  const started = Date.now();
  let slowest = 0;
  let chatting = true;
  const talk = async (conversation: number) => {
    for (let index = 0; index < options.perConversation; index++) {
      const said = marker(conversation, index);
      const sentAt = Date.now();
      platform.say(conversation, index, said);
      await poll(() => platform.answers(conversation, said) > 0, 90_000).catch(() => undefined);
      slowest = Math.max(slowest, Date.now() - sentAt);
    }
  };
  const pause = () => new Promise((resolve) => setTimeout(resolve, CYCLE_MS / 2));
  const killer = async () => {
    for (let kill = 0; kill < options.kills && chatting; kill++) {
      await pause();
      if (!chatting) break;
      platform.dropConnection?.();
      await pause();
      if (!chatting) break;
      logs.push(gateway.stderr());
      gateway.kill("SIGKILL");
      await gateway.exited;
      gateway = await start();
    }
  };
  const conversations = Array.from({ length: options.conversations }, (_, index) => index);
  const killing = killer();
  await Promise.all(conversations.map((conversation) => talk(conversation)));
  chatting = false;
  await killing;
  const expected = conversations.flatMap((conversation) =>
    Array.from({ length: options.perConversation }, (_, index) => ({
      conversation,
      marker: marker(conversation, index),
    })),
  );
  const answered = ({ conversation, marker: said }: (typeof expected)[number]) =>
    platform.answers(conversation, said);
  // What is answered late (a resend after the last restart) has a moment to arrive.
  await poll(() => expected.every((each) => answered(each) > 0), 30_000).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await stopRudder(gateway);
  logs.push(gateway.stderr());
  const counts = expected.map(answered);
  if (process.env.CHAOS_LOGS) {
    const lost = expected.filter((_, index) => counts[index] === 0).map((each) => each.marker);
    writeFileSync(process.env.CHAOS_LOGS, `${logs.join("\n-----\n")}\nlost: ${lost.join(" ")}\n`);
  }
  const mayRepeat = logs.join("\n").match(/recovered, may repeat/g)?.length ?? 0;
  const twice = counts.filter((count) => count > 1).length;
  await platform.close();
  await messagesApi.close();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const all = counts.every((count) => count > 0);
  const { words } = options;
  return [
    figure(name, `messages (${words.messages})`, expected.length),
    figure(
      name,
      words.answered,
      counts.filter((count) => count > 0).length,
      String(expected.length),
      all,
    ),
    figure(name, words.lost, counts.filter((count) => count === 0).length, "0", all),
    figure(name, words.twice, twice, `<= may repeat (${mayRepeat})`, twice <= mayRepeat),
    figure(name, "sends marked recovered, may repeat", mayRepeat),
    figure(name, "slowest answer", `${(slowest / 1000).toFixed(1)} s`),
    figure(name, "run time", `${seconds} s`),
  ];
}
