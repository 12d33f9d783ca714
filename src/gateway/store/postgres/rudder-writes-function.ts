/**
 * The SQL of `rudder_writes`: a worker's writes of one moment, of every kind, in one statement
 * (see write-batch.ts): the marks and counts (of messages stored before), the new messages with
 * their channels, and the events with the NOTIFY announcing them all, each channel's event lock
 * taken first in the order of the locks' keys. Returns the events' ids, ascending,
 * comma-separated. PostgreSQL replaces a function whole, so each schema step that changes it
 * restates all of it: the versions are written here once, each step naming what its own adds,
 * and a released step's function stays what it was.
 */

/** What a step's `rudder_writes` does beyond the first version's. */
export interface RudderWritesVersion {
  /** Takes each new message's attachments (`f`, JSON) into `messages.attachments`. */
  attachments: boolean;
  /** Finishes each new message's delivery claim (`q` its source, `g` its key) as it is stored. */
  finishClaims: boolean;
}

/** The first step creates the function; a later one replaces it with its version. */
export function rudderWritesFunction(
  statement: "CREATE" | "CREATE OR REPLACE",
  { attachments, finishClaims }: RudderWritesVersion,
): string {
  const fields = `${attachments ? ", f" : ""}${finishClaims ? ", q, g" : ""}`;
  const typedFields = `${attachments ? ", f text" : ""}${finishClaims ? ", q text, g text" : ""}`;
  const finishing = finishClaims
    ? `
      UPDATE inbound_deliveries SET finished_at = p_at
      FROM json_to_recordset(p_inserts) AS claims(q text, g text)
      WHERE claims.q IS NOT NULL AND source = claims.q AND delivery_key = claims.g
        AND finished_at IS NULL;`
    : "";
  return `
  ${statement} FUNCTION rudder_writes(p_updates json, p_inserts json, p_events text,
    p_notify text, p_at timestamptz) RETURNS text
  LANGUAGE plpgsql AS $$
  DECLARE
    ids text;
  BEGIN
    IF p_updates IS NOT NULL THEN
      PERFORM rudder_message_updates(p_updates, p_at);
    END IF;
    IF p_inserts IS NOT NULL THEN
      WITH items AS (
        SELECT * FROM ROWS FROM (json_to_recordset(p_inserts) AS (i text, c text, r text, k text,
          t text, s text, o text, a timestamptz, d text${typedFields}))
          WITH ORDINALITY AS list(i, c, r, k, t, s, o, a, d${fields}, position)
      ),
      channel AS (
        INSERT INTO channels (id, created_at, last_activity_at)
        SELECT c, max(a), max(a) FROM items GROUP BY c ORDER BY c
        ON CONFLICT (id) DO UPDATE SET last_activity_at = excluded.last_activity_at
        RETURNING id
      )
      INSERT INTO messages (id, channel_id, role, kind, text, state, source, created_at,
        updated_at, deliveries, delivered_in${attachments ? ", attachments" : ""})
      SELECT i, channel.id, r, k, t, s, o, a, a, (d IS NOT NULL)::int, d${attachments ? ", f" : ""}
      FROM items JOIN channel ON channel.id = items.c
      ORDER BY position;${finishing}
    END IF;
    IF p_events IS NULL THEN
      RETURN NULL;
    END IF;
    PERFORM count(pg_advisory_xact_lock(key)) FROM (
      SELECT DISTINCT hashtext('rudder_events:' || (item->>'c')) AS key
      FROM json_array_elements(p_events::json) AS list(item) ORDER BY key
    ) keys;
    WITH stored AS (
      INSERT INTO events (channel_id, event)
      SELECT item->>'c', item->'e'
      FROM json_array_elements(p_events::json) WITH ORDINALITY AS list(item, position)
      ORDER BY position
      RETURNING id
    )
    SELECT string_agg(id::text, ',' ORDER BY id) INTO ids FROM stored;
    PERFORM pg_notify(p_notify, '{"ids":[' || ids || '],"items":' || p_events || '}');
    RETURN ids;
  END
  $$;
`;
}
