/**
 * What was said while the bot was not connected: for each thread and DM the store knows, the
 * messages after the last one stored (by time: a snowflake holds its moment), oldest first, up
 * to a hundred a channel, in channels heard from in the last 13 days; a read that fails for a
 * while (a 429, a 5xx) is tried again. Each goes through the same path as a live message, so
 * one the store has seen already (its id claimed) is dropped: reading one again is harmless.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { addressOf, snowflakeAt } from "./discord-address.js";
import type { DiscordMessage } from "./discord-incoming.js";
import { type DiscordRest, discordFailure } from "./discord-rest.js";

/** Discord's most messages in one read. */
const READ_LIMIT = 100;
/** A read is tried this many times, this long apart and longer each time (or Discord's `retry_after`). */
const READ_TRIES = 5;
const RETRY_PAUSE_MS = 500;
/** Channels quiet longer are not read (the store forgets delivered ids after 14 days). */
const QUIET_LIMIT_MS = 13 * 24 * 60 * 60_000;

export async function catchUp(
  known: ReadonlyArray<{ channelId: string; lastMessageAt: string | undefined }>,
  rest: DiscordRest,
  handle: (message: DiscordMessage) => Promise<void>,
  log: (line: string) => void,
): Promise<void> {
  let read = 0;
  for (const { channelId, lastMessageAt } of known) {
    const address = addressOf(channelId);
    if (address === null || lastMessageAt === undefined) continue;
    if (Date.now() - Date.parse(lastMessageAt) > QUIET_LIMIT_MS) continue;
    const after = snowflakeAt(Date.parse(lastMessageAt));
    const messages = await readAfter(rest, address.thread, after).catch((error: unknown) => {
      log(`discord: cannot read ${channelId} to catch up: ${describe(error)}`);
      return [];
    });
    const oldestFirst = [...messages].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    for (const message of oldestFirst) {
      if (message.author.bot) continue;
      read += 1;
      await handle(message);
    }
  }
  if (read > 0)
    log(`discord: caught up: ${read} message(s) read back from ${known.length} channel(s)`);
}

/**
 * One read of a channel's history, tried again on a transient failure (a 429 after its
 * `retry_after`, a 5xx, a lost connection) up to `READ_TRIES` times: a read given up loses
 * what was said there meanwhile.
 */
async function readAfter(
  rest: DiscordRest,
  channel: string,
  after: string,
): Promise<DiscordMessage[]> {
  for (let tries = 1; ; tries += 1) {
    try {
      return (await rest.get(`/channels/${channel}/messages`, {
        query: new URLSearchParams({ after, limit: String(READ_LIMIT) }),
      })) as DiscordMessage[];
    } catch (error) {
      const failure = discordFailure(error);
      if (failure.kind !== "transient" || tries >= READ_TRIES) throw error;
      await sleep(Math.max(failure.retryAfterMs ?? 0, RETRY_PAUSE_MS * tries));
    }
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = (error as { status?: unknown }).status;
  const text = error.message || error.name;
  return typeof status === "number" ? `${text} (HTTP ${status})` : text;
}
