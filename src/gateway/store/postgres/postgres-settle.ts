import type pg from "pg";
import { newMessageId } from "../message-id.js";
import { newMessage } from "../new-message.js";
import { jsonColumn } from "../rows.js";
import type { MessageRecord, Settlement } from "../store.js";
import { preparedQuery } from "./prepared-query.js";

/**
 * How the settled messages are matched. A statement is planned once per connection, and a plan
 * made while `messages` was small keeps the sequential scan it chose then; `id = ANY(array)`
 * gets one (PostgreSQL cannot tell how long the array will be), so the usual settlement of one
 * message is a statement of its own, whose equality on the unique key always takes the index.
 */
const ONE = "id = $1::text";
const MANY = "id = ANY($1::text[])";

/**
 * A settlement as one statement (one round trip): the open messages locked (`FOR UPDATE`, so two workers
 * settling the same message answer it once), the channel's lease checked when this worker is
 * fenced (`FOR SHARE` holds off a take-over until the answer is written; another owner's lease
 * writes nothing), then the states, the reply, the channel's activity (and context usage, when given), the turn
 * and what the page showed of it.
 * The reply's record is built here from what was written (reading the row back costs a worker
 * the parsing of every column).
 */
export async function settleStatement(
  pool: pg.Pool,
  worker: string | null,
  settlement: Settlement,
): Promise<MessageRecord | null> {
  const { messageIds, state, reply, turn } = settlement;
  if (messageIds.length === 0) return null;
  const files = settlement.files?.length ? settlement.files : undefined;
  const one = messageIds.length === 1;
  const at = new Date();
  const replyId = newMessageId();
  const { rows } = await pool.query<{
    channel_id: string;
    reply_to: string;
    answers: string | null;
  }>(
    preparedQuery(
      `WITH locked AS (
       SELECT id, channel_id, ${one ? "1" : "array_position($1::text[], id)"} AS position
       FROM messages
       WHERE ${one ? ONE : MANY} AND state IS DISTINCT FROM 'answered'
       FOR UPDATE
     ),
     first AS (SELECT id, channel_id FROM locked ORDER BY position LIMIT 1),
     lease AS (
       SELECT owner FROM leases
       WHERE $2::text IS NOT NULL AND channel_id = (SELECT channel_id FROM first)
       FOR SHARE
     ),
     allowed AS (
       SELECT id, channel_id FROM first
       WHERE NOT EXISTS (SELECT 1 FROM lease WHERE owner <> $2::text)
     ),
     updated AS (
       UPDATE messages SET state = $3::text, retry_at = $4::timestamptz, updated_at = $5::timestamptz
       WHERE ${one ? ONE : MANY} AND id IN (SELECT id FROM locked)
         AND EXISTS (SELECT 1 FROM allowed)
     ),
     touched AS (
       UPDATE channels SET last_activity_at = $5,
         context_tokens = CASE WHEN $18::boolean THEN $19::integer ELSE context_tokens END,
         context_window = CASE WHEN $18::boolean THEN $20::integer ELSE context_window END
       WHERE id = (SELECT channel_id FROM allowed)
     ),
     turn AS (
       INSERT INTO turns (message_id, result, cost_usd, usage, duration_ms, num_turns,
         is_error, subtype, session_id, created_at, channel_id, binding, input_tokens,
         output_tokens)
       SELECT id, $9::text, $10::float8, $11::jsonb, $12::integer, $13::integer, $14::boolean,
         $15::text, $16::text, $5, channel_id, $21::text, $22::bigint, $23::bigint
       FROM allowed WHERE $8::boolean
       ON CONFLICT (message_id) DO UPDATE SET result = excluded.result,
         cost_usd = excluded.cost_usd, usage = excluded.usage,
         duration_ms = excluded.duration_ms, num_turns = excluded.num_turns,
         is_error = excluded.is_error, subtype = excluded.subtype,
         session_id = excluded.session_id, created_at = excluded.created_at,
         channel_id = excluded.channel_id, binding = excluded.binding,
         input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens
     ),
     display AS (
       INSERT INTO turn_displays (message_id, channel_id, display, created_at)
       SELECT $17::text, channel_id, $24::text, $5 FROM allowed WHERE $24::text IS NOT NULL
       ON CONFLICT (message_id) DO NOTHING
     )
     INSERT INTO messages (id, channel_id, role, kind, text, state, reply_to, source,
       created_at, updated_at, answers, files)
     SELECT $17::text, channel_id, 'assistant', $6::text, $7::text, NULL, id, 'gateway', $5, $5,
       (SELECT CASE WHEN count(*) > 1 THEN json_agg(id ORDER BY position)::text END FROM locked),
       $25::text
     FROM allowed
     RETURNING channel_id, reply_to, answers`,
      [
        one ? messageIds[0] : messageIds,
        worker,
        state,
        settlement.retryAt ?? null,
        at,
        reply.kind,
        reply.text,
        turn !== undefined,
        turn?.result ?? "",
        turn?.costUsd ?? null,
        jsonColumn(turn?.usage),
        turn?.durationMs ?? null,
        turn?.numTurns ?? null,
        turn?.isError ?? false,
        turn?.subtype ?? null,
        turn?.sessionId ?? null,
        replyId,
        settlement.context !== undefined,
        settlement.context?.tokens ?? null,
        settlement.context?.window ?? null,
        turn?.binding ?? null,
        turn?.inputTokens ?? null,
        turn?.outputTokens ?? null,
        settlement.display ?? null,
        jsonColumn(files),
      ],
    ),
  );
  const row = rows[0];
  if (row === undefined) return null;
  return newMessage(
    {
      channelId: row.channel_id,
      role: "assistant",
      kind: reply.kind,
      text: reply.text,
      state: null,
      replyTo: row.reply_to,
      source: "gateway",
      files,
      ...(row.answers === null ? {} : { answers: JSON.parse(row.answers) as string[] }),
    },
    at.toISOString(),
    replyId,
  );
}
