import type pg from "pg";
import { addMessageAttachments } from "./attachments-migration.js";
import { rudderWritesFunction } from "./rudder-writes-function.js";

/**
 * The PostgreSQL schema, in versioned steps applied in order (the SQLite adapter has its own,
 * see ../sqlite/migrations.ts): SQL, or a function for a step SQL cannot say. `rudder_schema`
 * records each step applied; a step is never edited once released, only followed by a new one.
 */
export const migrations: ReadonlyArray<string | ((client: pg.ClientBase) => Promise<void>)> = [
  `
  CREATE TABLE channels (
    id text PRIMARY KEY,
    session_id text,
    created_at timestamptz NOT NULL,
    last_activity_at timestamptz NOT NULL,
    context_tokens integer,
    context_window integer
  );
  CREATE TABLE messages (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    channel_id text NOT NULL REFERENCES channels(id),
    role text NOT NULL,
    kind text NOT NULL,
    text text NOT NULL,
    state text,
    reply_to text,
    attempts integer NOT NULL DEFAULT 0,
    retry_at timestamptz,
    source text NOT NULL DEFAULT 'http',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX messages_by_channel ON messages(channel_id, seq);
  CREATE INDEX messages_by_state ON messages(state) WHERE kind = 'user';
  CREATE TABLE turns (
    message_id text PRIMARY KEY REFERENCES messages(id),
    result text NOT NULL,
    cost_usd double precision,
    usage jsonb,
    duration_ms integer,
    num_turns integer,
    is_error boolean NOT NULL,
    subtype text,
    session_id text,
    created_at timestamptz NOT NULL
  );
  CREATE TABLE schedules (
    id text PRIMARY KEY,
    cron text NOT NULL,
    channel_id text NOT NULL,
    prompt text NOT NULL,
    paused boolean NOT NULL DEFAULT false,
    consecutive_failures integer NOT NULL DEFAULT 0,
    last_run_at timestamptz,
    next_run_at timestamptz,
    last_error text,
    created_at timestamptz NOT NULL
  );
  CREATE TABLE settings (
    name text PRIMARY KEY,
    value text NOT NULL
  );
  `,
  `
  CREATE TABLE leases (
    channel_id text PRIMARY KEY,
    owner text NOT NULL,
    expires_at timestamptz NOT NULL
  );
  CREATE INDEX leases_by_owner ON leases(owner);
  `,
  `
  CREATE TABLE events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    channel_id text NOT NULL,
    event json NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX events_by_channel ON events(channel_id, id);
  CREATE INDEX events_by_time ON events(created_at);
  `,
  `
  CREATE TABLE transcript_chunks (
    session_id text NOT NULL,
    start_offset bigint NOT NULL,
    end_offset bigint NOT NULL,
    channel_id text NOT NULL,
    bytes bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, start_offset)
  );
  `,
  `
  CREATE TABLE permission_requests (
    id text PRIMARY KEY,
    channel_id text NOT NULL,
    owner text NOT NULL,
    request json NOT NULL,
    decision text,
    message text,
    resolved_by text,
    created_at timestamptz NOT NULL,
    settled_at timestamptz
  );
  CREATE INDEX permission_requests_pending ON permission_requests(channel_id)
    WHERE decision IS NULL;
  CREATE INDEX permission_requests_by_time ON permission_requests(created_at);
  `,
  `
  ALTER TABLE messages ADD COLUMN deliveries integer NOT NULL DEFAULT 0;
  ALTER TABLE messages ADD COLUMN delivered_in text;
  ALTER TABLE messages ADD COLUMN attempted_in text;
  `,
  `
  CREATE TABLE spent_link_codes (
    nonce text PRIMARY KEY,
    expires_at timestamptz NOT NULL
  );
  `,
  // A session's side files (Claude Code's subagent transcripts) are chunks too, named by path.
  `
  ALTER TABLE transcript_chunks ADD COLUMN file text NOT NULL DEFAULT '';
  ALTER TABLE transcript_chunks DROP CONSTRAINT transcript_chunks_pkey;
  ALTER TABLE transcript_chunks ADD PRIMARY KEY (session_id, file, start_offset);
  `,
  // A batch of delivery marks and started counts (see message-writes.ts) in one statement, each
  // an update of its own by the message's key: the plan of `id = item.i` inside a function
  // always takes the index, where a join of `messages` with a list of ids may be planned as a
  // scan of the whole table and kept so for the connection's life.
  `
  CREATE FUNCTION rudder_message_updates(p_items json, p_at timestamptz) RETURNS void
  LANGUAGE plpgsql AS $$
  DECLARE
    item record;
  BEGIN
    FOR item IN SELECT * FROM json_to_recordset(p_items) AS t(i text, s text, r text) LOOP
      IF item.s IS NULL THEN
        UPDATE messages SET attempts = attempts + 1, attempted_in = item.r
        WHERE id = item.i AND attempted_in IS DISTINCT FROM item.r
          AND state IS DISTINCT FROM 'answered';
      ELSE
        UPDATE messages SET state = item.s, updated_at = p_at,
          deliveries = deliveries + (item.r IS NOT NULL AND delivered_in IS DISTINCT FROM item.r)::int,
          delivered_in = coalesce(item.r, delivered_in)
        WHERE id = item.i AND state IS DISTINCT FROM 'answered';
      END IF;
    END LOOP;
  END
  $$;
  `,
  // A worker's writes of one moment, of every kind, in one statement (see write-batch.ts).
  rudderWritesFunction("CREATE", { attachments: false, finishClaims: false }),
  // A reply that answers several messages at once names them all (JSON), `reply_to` the first.
  `
  ALTER TABLE messages ADD COLUMN answers text;
  `,
  // Chat sources: the reply ledger (outbound written before it is sent), pairing codes, grants.
  `
  CREATE TABLE outbound (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    source text NOT NULL,
    channel_id text NOT NULL,
    kind text NOT NULL,
    action text NOT NULL,
    target text,
    origin text,
    body text NOT NULL,
    state text NOT NULL,
    platform_id text,
    may_repeat boolean NOT NULL DEFAULT false,
    attempts integer NOT NULL DEFAULT 0,
    claimed_by text,
    claimed_until timestamptz,
    next_at timestamptz NOT NULL,
    last_error text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE UNIQUE INDEX outbound_by_origin ON outbound(origin) WHERE origin IS NOT NULL AND action = 'send';
  CREATE INDEX outbound_unsent ON outbound(source, seq) WHERE state IN ('pending', 'sending');
  CREATE INDEX outbound_by_target ON outbound(target) WHERE target IS NOT NULL;
  CREATE INDEX outbound_by_channel ON outbound(channel_id, created_at);
  CREATE TABLE pairings (
    source text NOT NULL,
    code text NOT NULL,
    user_id text NOT NULL,
    chat_id text NOT NULL,
    name text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    approved_at timestamptz,
    approved_by text,
    PRIMARY KEY (source, code)
  );
  CREATE TABLE channel_grants (
    channel_id text NOT NULL,
    tool_name text NOT NULL,
    command text NOT NULL DEFAULT '',
    granted_by text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (channel_id, tool_name, command)
  );
  `,
  // What the page showed of each turn, by the reply or error that ended it (see TurnDisplays).
  `
  CREATE TABLE turn_displays (
    message_id text PRIMARY KEY,
    channel_id text NOT NULL,
    display text NOT NULL,
    created_at timestamptz NOT NULL
  );
  `,
  // What each turn spent, where: budgets sum it per channel, per binding and in all, by time.
  `
  ALTER TABLE turns ADD COLUMN channel_id text;
  ALTER TABLE turns ADD COLUMN binding text;
  ALTER TABLE turns ADD COLUMN input_tokens bigint;
  ALTER TABLE turns ADD COLUMN output_tokens bigint;
  UPDATE turns SET channel_id = messages.channel_id FROM messages
    WHERE messages.id = turns.message_id;
  CREATE INDEX turns_by_time ON turns(created_at);
  `,
  // Each platform message a chat source took, by its own id: a redelivery is dropped.
  `
  CREATE TABLE inbound_deliveries (
    source text NOT NULL,
    delivery_key text NOT NULL,
    created_at timestamptz NOT NULL,
    finished_at timestamptz,
    PRIMARY KEY (source, delivery_key)
  );
  CREATE INDEX inbound_deliveries_by_time ON inbound_deliveries(created_at);
  `,
  // Spend no settled turn holds (see SpendEntry): wake-ups, compactions, running turns so far.
  `
  CREATE TABLE spend_entries (
    id text PRIMARY KEY,
    channel_id text NOT NULL,
    binding text,
    kind text NOT NULL,
    cost_usd double precision NOT NULL,
    input_tokens bigint NOT NULL,
    output_tokens bigint NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX spend_entries_by_time ON spend_entries(created_at);
  `,
  // A channel's name given on the page, its chat's own title, and whether it is archived.
  `
  ALTER TABLE channels ADD COLUMN title text;
  ALTER TABLE channels ADD COLUMN chat_title text;
  ALTER TABLE channels ADD COLUMN archived_at timestamptz;
  `,
  // The files an agent sent in a turn (its send_file tool), with the reply (JSON, SentFile[]).
  `
  ALTER TABLE messages ADD COLUMN files text;
  `,
  // The files that came with a user message (JSON, MessageAttachment[]).
  addMessageAttachments,
  // A chat message's delivery claim finished in the statement that stores the message (see
  // DeliveryClaim), so a worker killed between the two can no longer leave a stored message
  // whose redelivery is taken again.
  rudderWritesFunction("CREATE OR REPLACE", { attachments: true, finishClaims: true }),
];

/** The schema version a fully migrated database reports. */
export const schemaVersion = migrations.length;

/** Any number, the same for every rudder: workers starting together migrate one at a time. */
const MIGRATION_LOCK = 0x72756464;

/**
 * Brings the database up to `schemaVersion` in one transaction (PostgreSQL's DDL is
 * transactional: all steps or none), under an advisory lock so that workers starting together
 * do not race. Throws when the database is newer than this code (a downgrade), rather than
 * guessing at a schema it does not know.
 */
export async function migrate(client: pg.ClientBase): Promise<number> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS rudder_schema (
         version integer PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM rudder_schema",
    );
    const current = rows[0]?.version ?? 0;
    if (current > schemaVersion) {
      throw new Error(
        `database schema version ${current} is newer than this rudder (${schemaVersion})`,
      );
    }
    for (let version = current; version < schemaVersion; version += 1) {
      const migration = migrations[version]!;
      if (typeof migration === "string") await client.query(migration);
      else await migration(client);
      await client.query("INSERT INTO rudder_schema (version) VALUES ($1)", [version + 1]);
    }
    await client.query("COMMIT");
    return schemaVersion;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}
