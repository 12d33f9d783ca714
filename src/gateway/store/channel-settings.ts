/**
 * What people set on a channel besides talking in it: a name given on the page (`title`),
 * the name its chat has on its platform (`chatTitle`, a Telegram group's title, noted by its
 * source), and whether it is archived (hidden from the page's list, kept whole, restorable).
 * All three are columns of `channels`, so `listChannels` returns them. And removing it from the
 * store (`remove`): what a channel's removal (routing/channel-removal.ts) does last.
 */
export interface ChannelSettings {
  /** Names the channel (null or "" clears the name); false when there is no such channel. */
  rename(channelId: string, title: string | null): Promise<boolean>;
  /** Archives or restores the channel; false when there is no such channel. */
  archive(channelId: string, archived: boolean): Promise<boolean>;
  /** Keeps the chat's own title as its platform names it (a no-op for an unknown channel). */
  noteChatTitle(channelId: string, chatTitle: string): Promise<void>;
  /**
   * Deletes the channel, its messages, turns, transcripts and grants in one transaction (see
   * `CHANNEL_REMOVAL_SQL`: its spend stays counted); null when there is no such channel.
   */
  remove(channelId: string): Promise<{ messages: number } | null>;
}
