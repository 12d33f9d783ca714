/**
 * What the page showed of each agent turn (its texts, tool calls and results, duration, cost,
 * errors), kept by the reply or error message that ended it, so that a channel's history reads
 * the same after a restart and on any worker. The display is the page's JSON (`TurnDisplay`),
 * stored as text; the store does not look inside.
 */
export interface TurnDisplays {
  /** Keeps `display` for the message `messageId` of `channelId`; a second save is ignored. */
  save(messageId: string, channelId: string, display: string): Promise<void>;
  /** The displays kept for these messages, by message id (messages without one are absent). */
  list(messageIds: readonly string[]): Promise<Map<string, string>>;
}
