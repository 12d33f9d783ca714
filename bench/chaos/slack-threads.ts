/**
 * Threads on Slack through the chat kit while everything fails (the kit's chaos scenario,
 * `chat-chaos.ts`): `threads` threads, each started by a mention and continued by replies, to a
 * `rudder serve` whose Slack source talks to the fake Slack over Socket Mode; the Web API fails
 * one call in ten (a 429 with Retry-After or a 500), the socket is dropped now and then, and the
 * gateway is SIGKILLed `kills` times mid-run (what was said meanwhile comes back by Slack's
 * resend of unacknowledged events and by the catch-up). An answer counts in its own thread only.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeSlack } from "../../test/helpers/fake-slack.js";
import { chatChaos } from "./chat-chaos.js";
import type { Figure } from "./figures.js";

export interface SlackThreadsOptions {
  root: string;
  threads: number;
  perThread: number;
  kills: number;
  failRate: number;
}

const USER = "U0CHAOS";
const CHANNEL = "C0CHAOS";

export function slackThreads(options: SlackThreadsOptions): Promise<Figure[]> {
  return chatChaos({
    name: "Slack threads",
    root: options.root,
    conversations: options.threads,
    perConversation: options.perThread,
    kills: options.kills,
    failRate: options.failRate,
    words: {
      messages: `${options.threads} threads, ${options.kills} kills and socket drops, 1 in ${Math.round(1 / options.failRate)} Web API calls failing`,
      answered: "answered in their thread",
      lost: "lost (never answered)",
      twice: "answered twice",
    },
    platform: async (folder) => {
      const slack = await startFakeSlack();
      writeFileSync(join(folder, "app-token"), `${slack.appToken}\n`, { mode: 0o600 });
      writeFileSync(join(folder, "bot-token"), `${slack.botToken}\n`, { mode: 0o600 });
      const roots = new Map<number, string>();
      return {
        serveArgs: [
          ...["--slack-app-token-file", join(folder, "app-token")],
          ...["--slack-bot-token-file", join(folder, "bot-token"), "--slack-allow", USER],
        ],
        env: { RUDDER_SLACK_API_URL: slack.url },
        ready: /connected \(Socket Mode\)/,
        failRate: (rate) => slack.failRate(rate),
        dropConnection: () => slack.dropSockets(),
        source: "slack",
        say: (thread, index, marker) => {
          if (index === 0) {
            const text = `<@${slack.botUserId}> chaos ${marker}`;
            roots.set(thread, slack.say({ user: USER, channel: CHANNEL, text }).ts);
          } else {
            const threadTs = roots.get(thread) as string;
            slack.say({ user: USER, channel: CHANNEL, text: `chaos ${marker}`, threadTs });
          }
          return {};
        },
        answers: (thread, marker) =>
          slack.messages.filter(
            (message) =>
              message.botId !== undefined &&
              message.threadTs === roots.get(thread) &&
              message.text.startsWith("echo:") &&
              message.text.includes(marker),
          ).length,
        close: () => slack.close(),
      };
    },
  });
}
