/**
 * Discord's channels as gateway channel ids: `discord:<guild id>:<channel id>:<thread id>` in a
 * guild (the thread the conversation lives in), `discord:dm:<channel id>:<channel id>` for a
 * direct message. A thread opened on a message has that message's id (Discord's rule), so the
 * channel of a mention is known before its thread exists.
 */

export const DISCORD_CHANNEL_PREFIX = "discord:";

export interface DiscordAddress {
  /** The guild's id, or `dm`. */
  guild: string;
  /** The channel the conversation hangs off (a thread's parent; the DM channel). */
  channel: string;
  /** Where messages go: the thread (or the DM channel, or `channel` itself). */
  thread: string;
}

export function channelIdOf(address: DiscordAddress): string {
  return `${DISCORD_CHANNEL_PREFIX}${address.guild}:${address.channel}:${address.thread}`;
}

/** The address of a channel id; null for another source's channel or a malformed one. */
export function addressOf(channelId: string): DiscordAddress | null {
  if (!channelId.startsWith(DISCORD_CHANNEL_PREFIX)) return null;
  const [guild, channel, thread, ...rest] = channelId
    .slice(DISCORD_CHANNEL_PREFIX.length)
    .split(":");
  if (!guild || !channel || !thread || rest.length > 0) return null;
  if (![channel, thread].every((id) => /^\d{1,20}$/.test(id))) return null;
  if (guild !== "dm" && !/^\d{1,20}$/.test(guild)) return null;
  return { guild, channel, thread };
}

/** Discord's epoch (2015-01-01 UTC), the origin of snowflake times. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/** The least snowflake of a moment: messages `after` it were sent later. */
export function snowflakeAt(time: number): string {
  const since = BigInt(Math.max(0, Math.floor(time))) - DISCORD_EPOCH;
  return String((since > 0n ? since : 0n) << 22n);
}
