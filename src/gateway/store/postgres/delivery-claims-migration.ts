/**
 * The PostgreSQL step that finishes a chat message's delivery claim in the statement that stores
 * the message: `rudder_writes` takes each new message's claim (`q` its source, `g` its key; the
 * function as before otherwise, see attachments-migration.ts), so a worker killed between the
 * two can no longer leave a stored message whose redelivery is taken again. Its own file: the
 * step restates the whole function.
 */
export const WRITES_FINISHING_CLAIMS = `
  CREATE OR REPLACE FUNCTION rudder_writes(p_updates json, p_inserts json, p_events text,
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
          t text, s text, o text, a timestamptz, d text, f text, q text, g text))
          WITH ORDINALITY AS list(i, c, r, k, t, s, o, a, d, f, q, g, position)
      ),
      channel AS (
        INSERT INTO channels (id, created_at, last_activity_at)
        SELECT c, max(a), max(a) FROM items GROUP BY c ORDER BY c
        ON CONFLICT (id) DO UPDATE SET last_activity_at = excluded.last_activity_at
        RETURNING id
      )
      INSERT INTO messages (id, channel_id, role, kind, text, state, source, created_at,
        updated_at, deliveries, delivered_in, attachments)
      SELECT i, channel.id, r, k, t, s, o, a, a, (d IS NOT NULL)::int, d, f
      FROM items JOIN channel ON channel.id = items.c
      ORDER BY position;
      UPDATE inbound_deliveries SET finished_at = p_at
      FROM json_to_recordset(p_inserts) AS claims(q text, g text)
      WHERE claims.q IS NOT NULL AND source = claims.q AND delivery_key = claims.g
        AND finished_at IS NULL;
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
