/**
 * What was said while the bot was not connected: for each thread and DM the store knows, the
 * messages after the last one stored (by time: a snowflake holds its moment), oldest first, up
 * to a hundred a channel, in channels heard from in the last 13 days. Each goes through the same path as a live message, so one the store
 * has seen already (its id claimed) is dropped: reading one again is harmless.
 */
import { addressOf, snowflakeAt } from "./discord-address.js";
import type { DiscordMessage } from "./discord-incoming.js";
import type { DiscordRest } from "./discord-rest.js";

/** Discord's most messages in one read. */
const READ_LIMIT = 100;
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
    let messages: DiscordMessage[];
    try {
      messages = (await rest.get(`/channels/${address.thread}/messages`, {
        query: new URLSearchParams({ after, limit: String(READ_LIMIT) }),
      })) as DiscordMessage[];
    } catch (error) {
      log(`discord: cannot read ${channelId} to catch up: ${describe(error)}`);
      continue;
    }
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
