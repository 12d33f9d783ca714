/**
 * Threads on Slack through the chat kit while everything fails: `threads` threads, each started
 * by a mention and continued by replies, one message after another (each waits for its answer
 * in its thread, up to a minute and a half), to a `rudder serve` whose Slack source talks to the
 * fake Slack over Socket Mode and whose agents talk to the fake Messages API; the Web API fails
 * one call in ten (a 429 with Retry-After or a 500), the socket is dropped now and then, and the
 * gateway is SIGKILLed `kills` times mid-run and started again on the same data (what was said
 * meanwhile comes back by Slack's resend of unacknowledged events and by the catch-up). Counts:
 * every message answered in its own thread, none twice except those the ledger marked
 * "recovered, may repeat", and how long the slowest answer took.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { echoFallback, startFakeMessagesApi } from "../../test/helpers/fake-messages-api.js";
import { startFakeSlack } from "../../test/helpers/fake-slack.js";
import { type RudderRun, startRudder, stopRudder } from "../../test/helpers/rudder-cli.js";
import { type Figure, figure, poll } from "./figures.js";

export interface SlackThreadsOptions {
  root: string;
  threads: number;
  perThread: number;
  kills: number;
  failRate: number;
}

const USER = "U0CHAOS";

export async function slackThreads(options: SlackThreadsOptions): Promise<Figure[]> {
  const name = "Slack threads";
  const folder = join(options.root, "slack-threads");
  mkdirSync(join(folder, "workspace"), { recursive: true });
  mkdirSync(join(folder, "home"), { recursive: true });
  const messagesApi = await startFakeMessagesApi({ fallback: echoFallback });
  const slack = await startFakeSlack();
  writeFileSync(join(folder, "app-token"), `${slack.appToken}\n`, { mode: 0o600 });
  writeFileSync(join(folder, "bot-token"), `${slack.botToken}\n`, { mode: 0o600 });
  const logs: string[] = [];
  const start = async (): Promise<RudderRun> => {
    const run = startRudder(
      [
        ...["serve", "--port", "0", "--data", join(folder, "data")],
        ...["--slack-app-token-file", join(folder, "app-token")],
        ...["--slack-bot-token-file", join(folder, "bot-token"), "--slack-allow", USER],
      ],
      {
        cwd: join(folder, "workspace"),
        env: {
          PATH: process.env.PATH,
          HOME: join(folder, "home"),
          RUDDER_MAX_RETRIES: "0",
          ANTHROPIC_BASE_URL: messagesApi.url,
          ANTHROPIC_API_KEY: "dummy",
          RUDDER_SLACK_API_URL: slack.url,
        },
      },
    );
    await poll(() => /connected \(Socket Mode\)/.test(run.stderr()), 60_000);
    return run;
  };
  let gateway = await start();
  slack.failRate(options.failRate);
  const roots = new Map<number, string>();
  const answers = (thread: number, marker: string) =>
    slack.messages.filter(
      (message) =>
        message.botId !== undefined &&
        message.threadTs === roots.get(thread) &&
        message.text.startsWith("echo:") &&
        message.text.includes(marker),
    );
  const started = Date.now();
  let slowest = 0;
  let chatting = true;
  const talk = async (thread: number) => {
    for (let index = 0; index < options.perThread; index++) {
      const marker = `t${thread}m${index}z`;
      const sentAt = Date.now();
      if (index === 0) {
        const said = slack.say({
          user: USER,
          channel: "C0CHAOS",
          text: `<@${slack.botUserId}> chaos ${marker}`,
        });
        roots.set(thread, said.ts);
      } else {
        slack.say({
          user: USER,
          channel: "C0CHAOS",
          text: `chaos ${marker}`,
          threadTs: roots.get(thread) as string,
        });
      }
      await poll(() => answers(thread, marker).length > 0, 90_000).catch(() => undefined);
      slowest = Math.max(slowest, Date.now() - sentAt);
    }
  };
  const killer = async () => {
    for (let kill = 0; kill < options.kills && chatting; kill++) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if (!chatting) break;
      slack.dropSockets();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if (!chatting) break;
      logs.push(gateway.stderr());
      gateway.kill("SIGKILL");
      await gateway.exited;
      gateway = await start();
    }
  };
  const threads = Array.from({ length: options.threads }, (_, index) => index);
  const killing = killer();
  await Promise.all(threads.map((thread) => talk(thread)));
  chatting = false;
  await killing;
  const expected = threads.flatMap((thread) =>
    Array.from({ length: options.perThread }, (_, index) => ({
      thread,
      marker: `t${thread}m${index}z`,
    })),
  );
  const all = () => expected.every(({ thread, marker }) => answers(thread, marker).length > 0);
  await poll(all, 30_000).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await stopRudder(gateway);
  logs.push(gateway.stderr());
  const counts = expected.map(({ thread, marker }) => answers(thread, marker).length);
  const mayRepeat = logs.join("\n").match(/recovered, may repeat/g)?.length ?? 0;
  const twice = counts.filter((count) => count > 1).length;
  await slack.close();
  await messagesApi.close();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  return [
    figure(
      name,
      `messages (${options.threads} threads, ${options.kills} kills and socket drops, 1 in ${Math.round(1 / options.failRate)} Web API calls failing)`,
      expected.length,
    ),
    figure(
      name,
      "answered in their thread",
      counts.filter((count) => count > 0).length,
      String(expected.length),
      counts.every((count) => count > 0),
    ),
    figure(
      name,
      "lost (never answered)",
      counts.filter((count) => count === 0).length,
      "0",
      counts.every((count) => count > 0),
    ),
    figure(name, "answered twice", twice, `<= may repeat (${mayRepeat})`, twice <= mayRepeat),
    figure(name, "sends marked recovered, may repeat", mayRepeat),
    figure(name, "slowest answer", `${(slowest / 1000).toFixed(1)} s`),
    figure(name, "run time", `${seconds} s`),
  ];
}
