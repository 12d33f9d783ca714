/**
 * The statements that remove a channel from a store, in order, shared by both adapters (`$1`
 * is the channel's id; SQLite reads `$1` as the same numbered parameter). The channel's
 * settled turns' spend is first copied into `spend_entries` (dated as the turns were), so
 * `spendSince` counts the same for its binding and the gateway after it is gone; its spend
 * entries stay as they are. Then its turns, what the page showed of them, its messages, its
 * stored transcripts, its grants, its chat source's sent or failed outbound entries (those not
 * sent yet finish as usual) and its row go. Schedules are removed by the caller, through the
 * scheduler, which disarms them on every worker.
 */
export const CHANNEL_REMOVAL_SQL: readonly string[] = [
  `INSERT INTO spend_entries (id, channel_id, binding, kind, cost_usd, input_tokens,
      output_tokens, created_at)
    SELECT 'removed:' || message_id, channel_id, binding, 'turn', COALESCE(cost_usd, 0),
      COALESCE(input_tokens, 0), COALESCE(output_tokens, 0), created_at
    FROM turns WHERE channel_id = $1
    ON CONFLICT (id) DO NOTHING`,
  "DELETE FROM turns WHERE message_id IN (SELECT id FROM messages WHERE channel_id = $1)",
  "DELETE FROM turn_displays WHERE channel_id = $1",
  "DELETE FROM transcript_chunks WHERE channel_id = $1",
  "DELETE FROM channel_grants WHERE channel_id = $1",
  "DELETE FROM outbound WHERE channel_id = $1 AND state NOT IN ('pending', 'sending')",
];

/** Counted: the messages that went with the channel. */
export const CHANNEL_MESSAGES_REMOVAL_SQL = "DELETE FROM messages WHERE channel_id = $1";

/** Last: the channel's row; none removed means there was no such channel. */
export const CHANNEL_ROW_REMOVAL_SQL = "DELETE FROM channels WHERE id = $1";

/** PostgreSQL only: the channel's shared event log and its permission requests. */
export const SHARED_CHANNEL_REMOVAL_SQL: readonly string[] = [
  "DELETE FROM events WHERE channel_id = $1",
  "DELETE FROM permission_requests WHERE channel_id = $1",
];
