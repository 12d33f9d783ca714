/**
 * The statements a worker's write batch sends instead of `rudder_writes` (write-batch.ts): one
 * mark or count alone, which has a cheaper statement of its own, and an append of events too
 * many or large for one NOTIFY. Apart from the message writes and the event log that use the
 * batch, so the batch imports neither of them.
 */
import type pg from "pg";
import { preparedQuery } from "./prepared-query.js";

/** The NOTIFY channel each stored event is announced on, to every worker. */
export const EVENTS_CHANNEL = "rudder_events";

/** A delivery mark (`s`, the state, and `r`, the run it went to) or a started count (no `s`). */
export interface Update {
  i: string;
  s: string | null;
  r: string | null;
}

/**
 * One mark or count alone (`$1` the id, `$2` the run, `$3` the state, `$4` the time): the
 * function's loop costs the server about 0.15 ms more than these for one message, the usual
 * batch when a worker is not busy. Their equality on the unique key always takes the index.
 */
export const STARTED_ONE = `UPDATE messages SET attempts = attempts + 1, attempted_in = $2::text
  WHERE id = $1::text AND attempted_in IS DISTINCT FROM $2::text
    AND state IS DISTINCT FROM 'answered'`;
export const STATE_ONE = `UPDATE messages SET state = $3::text, updated_at = $4::timestamptz,
    deliveries = deliveries + ($2::text IS NOT NULL AND delivered_in IS DISTINCT FROM $2::text)::int,
    delivered_in = coalesce($2::text, delivered_in)
  WHERE id = $1::text AND state IS DISTINCT FROM 'answered'`;

/** One mark or count alone, by the statement above for its kind. */
export async function updateAlone(pool: pg.Pool, { i, s, r }: Update): Promise<void> {
  await pool.query(
    s === null
      ? preparedQuery(STARTED_ONE, [i, r])
      : preparedQuery(STATE_ONE, [i, r, s, new Date()]),
  );
}

/**
 * The events given (`$1`, see `noticeItemsJson`) stored in order, each channel's lock first (as
 * `rudder_writes` does for an append that one NOTIFY announces, see write-batch.ts).
 */
const STORED = `items AS (
    SELECT item->>'c' AS channel_id, item->'e' AS event, position
    FROM json_array_elements($1::text::json) WITH ORDINALITY AS list(item, position)
  ),
  locked AS (
    SELECT count(pg_advisory_xact_lock(key)) AS locks FROM (
      SELECT DISTINCT hashtext('rudder_events:' || channel_id) AS key FROM items ORDER BY key
    ) keys
  ),
  stored AS (
    INSERT INTO events (channel_id, event)
    SELECT channel_id, event FROM locked, items
    ORDER BY position
    RETURNING id, channel_id, event
  )`;

/** The append of events too many or large for one NOTIFY: one each, a large one by its id. */
const APPEND_EACH_NOTICE = `WITH ${STORED},
  payload AS (
    SELECT id, json_build_object('id', id, 'c', channel_id, 'e', event)::text AS whole,
           json_build_object('id', id, 'c', channel_id)::text AS brief
    FROM stored ORDER BY id
  )
  SELECT id, pg_notify($2, CASE WHEN octet_length(whole) < 7900 THEN whole ELSE brief END)
  FROM payload`;

/** Events too many or large for one NOTIFY (`json`, see `noticeItemsJson`) stored; their ids. */
export async function appendEachNotice(pool: pg.Pool, json: string): Promise<number[]> {
  const { rows } = await pool.query<{ id: string }>(
    preparedQuery(APPEND_EACH_NOTICE, [json, EVENTS_CHANNEL]),
  );
  return rows.map((row) => Number(row.id)).sort((left, right) => left - right);
}
