import Database from "better-sqlite3";
import { LEGACY_MARKER_ROWS, legacyImageMarkers } from "../legacy-image-markers.js";

/**
 * Versioned schema changes, applied in order: SQL, or a function for a step SQL cannot say.
 * The database's `user_version` records how many have run; a migration is never edited once
 * released, only followed by a new one.
 */
export const migrations: ReadonlyArray<string | ((database: Database.Database) => void)> = [
  `
  CREATE TABLE channels (
    id TEXT PRIMARY KEY,
    session_id TEXT,
    created_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL
  );
  CREATE TABLE messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    channel_id TEXT NOT NULL REFERENCES channels(id),
    role TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    state TEXT,
    reply_to TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    retry_at TEXT,
    source TEXT NOT NULL DEFAULT 'http',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX messages_by_channel ON messages(channel_id, seq);
  CREATE INDEX messages_by_state ON messages(state) WHERE kind = 'user';
  CREATE TABLE turns (
    message_id TEXT PRIMARY KEY REFERENCES messages(id),
    result TEXT NOT NULL,
    cost_usd REAL,
    usage_json TEXT,
    duration_ms INTEGER,
    num_turns INTEGER,
    is_error INTEGER NOT NULL,
    subtype TEXT,
    session_id TEXT,
    created_at TEXT NOT NULL
  );
  CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    cron TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    prompt TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    last_run_at TEXT,
    next_run_at TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL
  );
  `,
  `
  ALTER TABLE channels ADD COLUMN context_tokens INTEGER;
  ALTER TABLE channels ADD COLUMN context_window INTEGER;
  `,
  `
  CREATE TABLE transcript_chunks (
    session_id TEXT NOT NULL,
    start_offset INTEGER NOT NULL,
    end_offset INTEGER NOT NULL,
    channel_id TEXT NOT NULL,
    bytes BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, start_offset)
  );
  `,
  `
  ALTER TABLE messages ADD COLUMN deliveries INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE messages ADD COLUMN delivered_in TEXT;
  ALTER TABLE messages ADD COLUMN attempted_in TEXT;
  `,
  // A session's side files (Claude Code's subagent transcripts) are chunks too, named by path.
  `
  CREATE TABLE transcript_files (
    session_id TEXT NOT NULL,
    file TEXT NOT NULL DEFAULT '',
    start_offset INTEGER NOT NULL,
    end_offset INTEGER NOT NULL,
    channel_id TEXT NOT NULL,
    bytes BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, file, start_offset)
  );
  INSERT INTO transcript_files
    (session_id, start_offset, end_offset, channel_id, bytes, created_at)
    SELECT session_id, start_offset, end_offset, channel_id, bytes, created_at
    FROM transcript_chunks;
  DROP TABLE transcript_chunks;
  ALTER TABLE transcript_files RENAME TO transcript_chunks;
  `,
  // A reply that answers several messages at once names them all (JSON), `reply_to` the first.
  `
  ALTER TABLE messages ADD COLUMN answers TEXT;
  `,
  // Page-link codes already traded, so that a restart does not make one good again.
  `
  CREATE TABLE spent_link_codes (
    nonce TEXT PRIMARY KEY,
    expires_at TEXT NOT NULL
  );
  `,
  // One row the store writes to learn whether it can write (at start, and after a fault).
  `
  CREATE TABLE store_probe (id INTEGER PRIMARY KEY, at TEXT NOT NULL);
  `,
  // Chat sources: the reply ledger (outbound written before it is sent), pairing codes, grants.
  `
  CREATE TABLE outbound (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT,
    origin TEXT,
    body TEXT NOT NULL,
    state TEXT NOT NULL,
    platform_id TEXT,
    may_repeat INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    claimed_by TEXT,
    claimed_until TEXT,
    next_at TEXT NOT NULL,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX outbound_by_origin ON outbound(origin) WHERE origin IS NOT NULL;
  CREATE INDEX outbound_unsent ON outbound(source, seq) WHERE state IN ('pending', 'sending');
  CREATE INDEX outbound_by_target ON outbound(target) WHERE target IS NOT NULL;
  CREATE INDEX outbound_by_channel ON outbound(channel_id, created_at);
  CREATE TABLE pairings (
    source TEXT NOT NULL,
    code TEXT NOT NULL,
    user_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    approved_at TEXT,
    approved_by TEXT,
    PRIMARY KEY (source, code)
  );
  CREATE TABLE channel_grants (
    channel_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    command TEXT NOT NULL DEFAULT '',
    granted_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (channel_id, tool_name, command)
  );
  `,
  // What the page showed of each turn, by the reply or error that ended it (see TurnDisplays).
  `
  CREATE TABLE turn_displays (
    message_id TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL,
    display TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  `,
  // What each turn spent, where: budgets sum it per channel, per binding and in all, by time.
  `
  ALTER TABLE turns ADD COLUMN channel_id TEXT;
  ALTER TABLE turns ADD COLUMN binding TEXT;
  ALTER TABLE turns ADD COLUMN input_tokens INTEGER;
  ALTER TABLE turns ADD COLUMN output_tokens INTEGER;
  UPDATE turns SET channel_id = (SELECT channel_id FROM messages WHERE id = turns.message_id);
  CREATE INDEX turns_by_time ON turns(created_at);
  `,
  // Each platform message a chat source took, by its own id: a redelivery is dropped.
  `
  CREATE TABLE inbound_deliveries (
    source TEXT NOT NULL,
    delivery_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    PRIMARY KEY (source, delivery_key)
  );
  CREATE INDEX inbound_deliveries_by_time ON inbound_deliveries(created_at);
  `,
  // Spend no settled turn holds (see SpendEntry): wake-ups, compactions, running turns so far.
  `
  CREATE TABLE spend_entries (
    id TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL,
    binding TEXT,
    kind TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX spend_entries_by_time ON spend_entries(created_at);
  `,
  // A channel's name given on the page, its chat's own title, and whether it is archived.
  `
  ALTER TABLE channels ADD COLUMN title TEXT;
  ALTER TABLE channels ADD COLUMN chat_title TEXT;
  ALTER TABLE channels ADD COLUMN archived_at TEXT;
  `,
  // The files an agent sent in a turn (its send_file tool), with the reply (JSON, SentFile[]).
  `
  ALTER TABLE messages ADD COLUMN files TEXT;
  `,
  // The files that came with a user message (JSON, MessageAttachment[]); the image marker lines
  // of messages stored before are read into it once (legacy-image-markers.ts).
  (database) => {
    database.exec("ALTER TABLE messages ADD COLUMN attachments TEXT");
    const update = database.prepare("UPDATE messages SET attachments = ? WHERE id = ?");
    for (const row of database.prepare(LEGACY_MARKER_ROWS).all() as Array<{
      id: string;
      text: string;
    }>) {
      const images = legacyImageMarkers(row.text);
      if (images.length > 0) update.run(JSON.stringify(images), row.id);
    }
  },
];

/** The schema version a fully migrated database reports. */
export const schemaVersion = migrations.length;

/**
 * Brings `database` up to `schemaVersion`, each step in its own transaction.
 * Throws when the database is newer than this code (a downgrade), rather than
 * guessing at a schema it does not know.
 */
export function migrate(database: Database.Database): number {
  const current = database.pragma("user_version", { simple: true }) as number;
  if (current > schemaVersion) {
    throw new Error(
      `database schema version ${current} is newer than this rudder (${schemaVersion})`,
    );
  }
  for (let version = current; version < schemaVersion; version += 1) {
    const step = database.transaction(() => {
      const migration = migrations[version]!;
      if (typeof migration === "string") database.exec(migration);
      else migration(database);
      database.pragma(`user_version = ${version + 1}`);
    });
    step();
  }
  return schemaVersion;
}

/** Opens the database at `path` in WAL mode with the store's settings, migrated. */
export function openMigrated(path: string): Database.Database {
  const database = new Database(path);
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  database.pragma("busy_timeout = 5000");
  migrate(database);
  return database;
}
