/**
 * What was said while nobody listened (the gateway down, the socket dropped): on each
 * connection, the known conversations are read again from Slack since their last stored
 * message (a minute earlier, for clocks), threads with `conversations.replies` and each
 * channel's or DM's top level with `conversations.history` (mentions and DMs there start new
 * conversations). DMs the bot never talked in are listed (`conversations.list`, `types=im`)
 * and read from the newest stored message of any conversation, when there is one (a first start
 * answers no old DMs). Each message read is fed like a live one: its delivery key is the
 * message's own (`<channel>:<ts>`), so what was taken already is dropped by the store's claim.
 */
import type { WebClient } from "@slack/web-api";
import type { ReceiveContext } from "../kit/chat-platform.js";
import { type SlackAddress, slackAddressOf } from "./slack-address.js";
import type { SlackMessageEvent } from "./slack-events.js";

/** Read this much before the last stored message: Slack's clock and ours differ a little. */
const MARGIN_SECONDS = 60;
/** Messages read per thread or channel at most, in one catch-up. */
const PAGE = 200;

interface Known {
  address: SlackAddress;
  oldest: number;
}

/** The known conversations, each with the Slack time to read from (undefined: nothing stored). */
export async function knownConversations(context: ReceiveContext): Promise<Known[]> {
  const known: Known[] = [];
  for (const { channelId, lastMessageAt } of await context.knownChannels()) {
    const address = slackAddressOf(channelId);
    if (address === null || lastMessageAt === undefined) continue;
    const oldest = Date.parse(lastMessageAt) / 1000 - MARGIN_SECONDS;
    if (Number.isFinite(oldest)) known.push({ address, oldest });
  }
  return known;
}

/**
 * Feeds every message of the known conversations newer than their last stored one, threads
 * first, then the top level of each channel since its newest conversation. Failures are logged
 * and skipped: what is missed now is read at the next connection.
 */
export async function catchUp(
  web: WebClient,
  known: Known[],
  feed: (event: SlackMessageEvent) => void,
  log: (line: string) => void,
): Promise<void> {
  const channels = new Map<string, { team: string; oldest: number }>();
  for (const dm of await newDirectMessages(web, known, log)) channels.set(dm.channel, dm);
  for (const { address, oldest } of known) {
    const channel = channels.get(address.channel);
    if (channel === undefined || channel.oldest < oldest) {
      channels.set(address.channel, { team: address.team, oldest });
    }
    await read(log, `the thread ${address.channel}/${address.threadTs}`, async () => {
      const result = await web.conversations.replies({
        channel: address.channel,
        ts: address.threadTs,
        oldest: oldest.toFixed(6),
        limit: PAGE,
      });
      for (const message of result.messages ?? []) {
        // The thread's first message is returned whatever `oldest` says.
        if (Number(message.ts) <= oldest) continue;
        feed(eventOf(message, address.channel, address.team));
      }
    });
  }
  for (const [channel, { team, oldest }] of channels) {
    await read(log, `the channel ${channel}`, async () => {
      const result = await web.conversations.history({
        channel,
        oldest: oldest.toFixed(6),
        limit: PAGE,
      });
      const top = (result.messages ?? []).filter(
        (message) => message.thread_ts === undefined || message.thread_ts === message.ts,
      );
      // History comes newest first: fed oldest first, as they were said.
      for (const message of top.reverse()) feed(eventOf(message, channel, team));
    });
  }
}

/** DMs the bot is in that no known conversation is in, each read since the newest stored. */
async function newDirectMessages(
  web: WebClient,
  known: Known[],
  log: (line: string) => void,
): Promise<Array<{ channel: string; team: string; oldest: number }>> {
  const newest = known.reduce<Known | undefined>(
    (best, each) => (best === undefined || each.oldest > best.oldest ? each : best),
    undefined,
  );
  if (newest === undefined) return [];
  const seen = new Set(known.map(({ address }) => address.channel));
  const found: Array<{ channel: string; team: string; oldest: number }> = [];
  await read(log, "the list of DMs", async () => {
    const result = await web.conversations.list({ types: "im", limit: PAGE });
    for (const { id } of result.channels ?? []) {
      if (id === undefined || seen.has(id)) continue;
      found.push({ channel: id, team: newest.address.team, oldest: newest.oldest });
    }
  });
  return found;
}

async function read(log: (line: string) => void, what: string, call: () => Promise<void>) {
  try {
    await call();
  } catch (error) {
    log(
      `slack: could not catch up on ${what}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

interface ReadMessage {
  type?: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  files?: unknown[];
}

function eventOf(message: ReadMessage, channel: string, team: string): SlackMessageEvent {
  return {
    type: "message",
    ...(message.subtype === undefined ? {} : { subtype: message.subtype }),
    channel,
    channel_type: channel.startsWith("D") ? "im" : "channel",
    ...(message.user === undefined ? {} : { user: message.user }),
    ...(message.bot_id === undefined ? {} : { bot_id: message.bot_id }),
    text: message.text ?? "",
    ts: String(message.ts),
    ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
    team,
    ...(message.files === undefined ? {} : { files: message.files as SlackMessageEvent["files"] }),
  };
}
