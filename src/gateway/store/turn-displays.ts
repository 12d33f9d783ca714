/**
 * What the page showed of each agent turn (its texts, tool calls and results, duration, cost,
 * errors), kept by the reply or error message that ended it, so that a channel's history reads
 * the same after a restart and on any worker. The display is the page's JSON (`TurnDisplay`),
 * stored as text; the store does not look inside. It is written by `settle` with the reply
 * (`Settlement.display`), in the same transaction, and read here.
 */
export interface TurnDisplays {
  /** The displays kept for these messages, by message id (messages without one are absent). */
  list(messageIds: readonly string[]): Promise<Map<string, string>>;
}
