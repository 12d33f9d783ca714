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
 * A conversation's first message said while the gateway was down, on a platform that cannot read
 * such a message back (a Discord DM: a bot cannot list its DMs), is counted apart as the
 * platform's limit, never as lost nor hidden. `CHAOS_LOGS=<file>` keeps the gateways' stderr
 * and the story of each message never answered (`chat-chaos-trace.ts`); a run that loses one
 * prints those stories too.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { echoFallback, startFakeMessagesApi } from "../../test/helpers/fake-messages-api.js";
import { type RudderRun, startRudder, stopRudder } from "../../test/helpers/rudder-cli.js";
import { type SaidMessage, traceLost } from "./chat-chaos-trace.js";
import { type Figure, figure, poll } from "./figures.js";

/** One platform's fake, as the scenario drives it. */
export interface ChatChaosPlatform {
  /** `rudder serve`'s flags for the platform (token files, the allow-list). */
  serveArgs: string[];
  /** The environment's additions (the fake's API URL). */
  env: Record<string, string>;
  /** The source's name (the store's claims are kept under it). */
  source: string;
  /** What the gateway's stderr says once the source receives. */
  ready: RegExp;
  /** The share of API calls that fail from now on. */
  failRate(rate: number): void;
  /** Drops the platform's connection without a goodbye; absent where there is none (polling). */
  dropConnection?(): void;
  /**
   * A person says message `index` of conversation `conversation`, which holds `marker`; what
   * the fake knows of it (its key, whether a live connection heard it, where answers go), or
   * null when it was not said (its conversation cannot go on).
   */
  say(
    conversation: number,
    index: number,
    marker: string,
  ): Pick<SaidMessage, "key" | "heard" | "place"> | null;
  /**
   * True when a message said while the gateway was down cannot be read back on this platform
   * (a conversation's first message where the bot cannot list conversations).
   */
  unreadableWhileDown?(said: SaidMessage): boolean;
  /** The fake's record of a message's place, for the story of a lost one. */
  trace?(said: SaidMessage): string[];
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
  const life = { number: 0, up: false };
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
    life.number += 1;
    await poll(() => platform.ready.test(run.stderr()), 60_000);
    life.up = true;
    return run;
  };
  let gateway = await start();
  platform.failRate(options.failRate);
  const marker = (conversation: number, index: number) => `c${conversation}m${index}z`;
  const started = Date.now();
  let slowest = 0;
  let chatting = true;
  const said = new Map<string, SaidMessage>();
  const talk = async (conversation: number) => {
    for (let index = 0; index < options.perConversation; index++) {
      const text = marker(conversation, index);
      const sentAt = Date.now();
      const at = sentAt - started;
      const heard = platform.say(conversation, index, text);
      // Not said: its conversation cannot go on (the rest count as lost, with no wait).
      if (heard === null) break;
      said.set(text, {
        conversation,
        index,
        marker: text,
        at,
        time: sentAt,
        life: life.number,
        up: life.up,
        ...heard,
      });
      await poll(() => platform.answers(conversation, text) > 0, 90_000).catch(() => undefined);
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
      life.up = false;
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
  // A conversation whose first message the platform could not read back: its losses are the
  // platform's limit (the rest of a thread never opened is never said).
  const unreadable = new Set(
    [...said.values()]
      .filter((each) => each.index === 0 && !each.up && platform.unreadableWhileDown?.(each))
      .map((each) => each.conversation),
  );
  const lostOnes = expected.filter((_, index) => counts[index] === 0);
  const limited = lostOnes.filter((each) => unreadable.has(each.conversation)).length;
  const story = traceLost(
    lostOnes.flatMap((each) => said.get(each.marker) ?? []),
    {
      databasePath: join(folder, "data", "gateway.db"),
      source: platform.source,
      logs: logs.join("\n"),
      ...(platform.trace ? { fake: platform.trace } : {}),
    },
  );
  if (story.length > 0) console.error(story.join("\n"));
  if (process.env.CHAOS_LOGS) {
    const lost = lostOnes.map((each) => each.marker);
    writeFileSync(
      process.env.CHAOS_LOGS,
      `${logs.join("\n-----\n")}\nlost: ${lost.join(" ")}\n${story.join("\n")}\n`,
    );
  }
  const mayRepeat = logs.join("\n").match(/recovered, may repeat/g)?.length ?? 0;
  const twice = counts.filter((count) => count > 1).length;
  await platform.close();
  await messagesApi.close();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const lost = lostOnes.length - limited;
  const all = lost === 0;
  const { words } = options;
  return [
    figure(name, `messages (${words.messages})`, expected.length),
    figure(
      name,
      words.answered,
      counts.filter((count) => count > 0).length,
      limited > 0
        ? `${expected.length - limited} (${expected.length} less the limit below)`
        : String(expected.length),
      all,
    ),
    figure(name, words.lost, lost, "0", all),
    figure(name, "said while the gateway was down, not readable back (platform limit)", limited),
    figure(name, words.twice, twice, `<= may repeat (${mayRepeat})`, twice <= mayRepeat),
    figure(name, "sends marked recovered, may repeat", mayRepeat),
    figure(name, "slowest answer", `${(slowest / 1000).toFixed(1)} s`),
    figure(name, "run time", `${seconds} s`),
  ];
}
