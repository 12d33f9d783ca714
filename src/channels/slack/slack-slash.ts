/**
 * Which conversation a slash command acts on: Slack sends no thread with one. A thread named in
 * the command's text (a link to one of its messages, as Slack's "Copy link" gives, or its
 * thread ts) is taken out of the text and used; else the newest thread the store knows in that
 * Slack channel (by the ts that started it), so every worker, and a restarted gateway, pick the
 * same one. None: a private answer saying why.
 */
import type { ReceiveContext } from "../kit/chat-platform.js";
import { slackChannelId } from "./slack-address.js";
import { knownConversations } from "./slack-catch-up.js";
import type { SlackSlashCommand } from "./slack-events.js";

export type SlashTarget = { channelId: string; text: string } | { answer: string };

/** `https://<team>.slack.com/archives/<channel>/p<ts without the dot>[?thread_ts=<ts>]`. */
const LINK = /^<?https?:\/\/[^\s/]+\/archives\/([A-Z0-9]+)\/p(\d{10})(\d{6})(\S*?)>?$/;
const TS = /^\d{10}\.\d{6}$/;

/** The thread a word names, if it names one: its channel (when a link says) and ts. */
function threadOf(word: string): { channel: string | undefined; ts: string } | null {
  if (TS.test(word)) return { channel: undefined, ts: word };
  const link = LINK.exec(word);
  if (link === null) return null;
  const reply = /[?&]thread_ts=(\d{10}\.\d{6})/.exec(link[4] ?? "");
  return { channel: link[1], ts: reply?.[1] ?? `${link[2]}.${link[3]}` };
}

export async function slashTarget(
  command: SlackSlashCommand,
  team: string,
  context: ReceiveContext | undefined,
): Promise<SlashTarget> {
  const words = (command.text ?? "").split(/\s+/).filter((word) => word !== "");
  const index = words.findIndex((word) => threadOf(word) !== null);
  const named = index === -1 ? null : threadOf(words[index] ?? "");
  const text = words.filter((_, at) => at !== index).join(" ");
  const known = context === undefined ? [] : await knownConversations(context).catch(() => []);
  const here = known.filter(({ address }) => address.channel === command.channel_id);
  if (named !== null) {
    if (named.channel !== undefined && named.channel !== command.channel_id) {
      return { answer: `That thread is in another channel: run ${command.command} there.` };
    }
    const channelId = slackChannelId({ team, channel: command.channel_id, threadTs: named.ts });
    if (!here.some(({ address }) => slackChannelId(address) === channelId)) {
      return { answer: `No conversation in that thread: mention me there to start one.` };
    }
    return { channelId, text };
  }
  const newest = here.reduce<(typeof here)[number] | undefined>(
    (best, each) =>
      best === undefined || Number(each.address.threadTs) > Number(best.address.threadTs)
        ? each
        : best,
    undefined,
  );
  if (newest === undefined) {
    return {
      answer: `No conversation here yet: mention me to start one, then ${command.command} works on it.`,
    };
  }
  return { channelId: slackChannelId(newest.address), text };
}
