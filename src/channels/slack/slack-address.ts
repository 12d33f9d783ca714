/**
 * Slack's channel ids: a conversation is one thread, `slack:<team id>:<channel id>:<thread ts>`
 * (the ts of the message that started it), so bindings can match a team, a channel or a thread.
 */

/** Channels of this source start with this. */
export const SLACK_CHANNEL_PREFIX = "slack:";

export interface SlackAddress {
  team: string;
  channel: string;
  threadTs: string;
}

export function slackChannelId(address: SlackAddress): string {
  return `${SLACK_CHANNEL_PREFIX}${address.team}:${address.channel}:${address.threadTs}`;
}

/** The team, channel and thread of a channel id; null for another source's channel. */
export function slackAddressOf(channelId: string): SlackAddress | null {
  if (!channelId.startsWith(SLACK_CHANNEL_PREFIX)) return null;
  const [team, channel, threadTs, ...rest] = channelId
    .slice(SLACK_CHANNEL_PREFIX.length)
    .split(":");
  if (!team || !channel || !threadTs || rest.length > 0) return null;
  return { team, channel, threadTs };
}

/** The conversation a channel id names; throws Slack's own refusal for a foreign one. */
export function slackAddressOrRefusal(channelId: string): SlackAddress {
  const address = slackAddressOf(channelId);
  if (address !== null) return address;
  throw Object.assign(new Error(`not a Slack channel: ${channelId}`), {
    code: "slack_webapi_platform_error",
    data: { error: "channel_not_found" },
  });
}
