import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import {
  CHAT_MESSAGE_KINDS,
  chatSourceOf,
  type GrantRow,
  type OutboundRow,
  outboundValues,
  type PairingRow,
  pairingCode,
  toGrant,
  toOutbound,
  toPairing,
  toUnrecorded,
  type UnrecordedRow,
} from "../source-rows.js";
import type {
  ChannelGrant,
  ChannelGrants,
  NewOutbound,
  OutboundEntry,
  OutboundLedger,
  PairingBook,
  PairingRequest,
  SourceStore,
  UnrecordedMessage,
} from "../source-store.js";
import type { GroupCommit } from "./group-commit.js";
import { sqliteInboundDeliveries } from "./sqlite-inbound-deliveries.js";

/** Writes a line in a channel's history (an `error` message, stored now); returns its id. */
export type InsertLine = (channelId: string, text: string) => string;

/**
 * The chat sources' tables in one gateway's SQLite file. One gateway uses the file, so at open
 * every claim still held is let go: the gateway that held it is gone (killed while sending),
 * and its `sending` rows are taken again at once, marked "may repeat".
 */
export function sqliteSourceStore(
  database: Database.Database,
  commits: GroupCommit,
  insertLine: InsertLine,
): SourceStore {
  try {
    database.prepare("UPDATE outbound SET claimed_until = NULL WHERE state = 'sending'").run();
  } catch {
    // A file that cannot be written now (read-only, locked) is the store's health to report;
    // the claims then run out on their own.
  }
  return {
    outbound: sqliteLedger(database, commits, insertLine),
    deliveries: sqliteInboundDeliveries(database, commits),
    pairings: sqlitePairings(database, commits),
    grants: sqliteGrants(database, commits),
  };
}

function sqliteLedger(
  database: Database.Database,
  commits: GroupCommit,
  insertLine: InsertLine,
): OutboundLedger {
  const byId = (id: string) =>
    database.prepare("SELECT * FROM outbound WHERE id = ?").get(id) as OutboundRow | undefined;
  const insert = (entry: NewOutbound, state: string, now: string): OutboundEntry => {
    const id = randomUUID();
    database
      .prepare(
        `INSERT INTO outbound (id, source, channel_id, kind, action, target, origin, body, state,
           next_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, ...outboundValues(entry), state, now, now, now);
    return toOutbound(byId(id) as OutboundRow);
  };
  return {
    recordAll: (entries) =>
      commits.write(() => {
        const now = new Date().toISOString();
        const known = database.prepare(
          "SELECT 1 FROM outbound WHERE origin = ? AND action = 'send'",
        );
        return entries
          .filter((entry) => entry.origin === undefined || !known.get(entry.origin))
          .map((entry) => insert(entry, "pending", now));
      }),
    record: (entry) =>
      commits.write(() => {
        const now = new Date().toISOString();
        if (entry.action === "edit" && entry.target !== undefined) {
          const waiting = database
            .prepare(
              `UPDATE outbound SET body = ?, updated_at = ?
               WHERE target = ? AND action = 'edit' AND state = 'pending' RETURNING *`,
            )
            .get(entry.body, now, entry.target) as OutboundRow | undefined;
          if (waiting) return toOutbound(waiting);
        }
        if (entry.origin !== undefined) {
          const known = database
            .prepare("SELECT 1 FROM outbound WHERE origin = ? AND action = 'send'")
            .get(entry.origin);
          if (known) return null;
        }
        return insert(entry, "pending", now);
      }),
    get: async (id) => {
      const row = byId(id);
      return row ? toOutbound(row) : null;
    },
    claim: (id, worker, leaseMs) =>
      commits.write(() => {
        const now = new Date();
        const row = database
          .prepare(
            `UPDATE outbound SET
               may_repeat = CASE WHEN state = 'sending' AND action = 'send' THEN 1 ELSE may_repeat END,
               state = 'sending', attempts = attempts + 1, claimed_by = ?, claimed_until = ?,
               updated_at = ?
             WHERE id = ? AND (state = 'pending' OR (state = 'sending'
               AND (claimed_until IS NULL OR claimed_until < ? OR claimed_by = ?)))
             RETURNING *`,
          )
          .get(
            worker,
            new Date(now.getTime() + leaseMs).toISOString(),
            now.toISOString(),
            id,
            now.toISOString(),
            worker,
          ) as OutboundRow | undefined;
        return row ? toOutbound(row) : null;
      }),
    sent: (id, platformId) =>
      commits.write(() => {
        database
          .prepare(
            `UPDATE outbound SET state = 'sent', platform_id = ?, claimed_until = NULL,
               updated_at = ? WHERE id = ?`,
          )
          .run(platformId, new Date().toISOString(), id);
      }),
    retry: (id, nextAt, error) =>
      commits.write(() => {
        database
          .prepare(
            `UPDATE outbound SET state = 'pending', next_at = ?, last_error = ?,
               claimed_until = NULL, updated_at = ? WHERE id = ? AND state <> 'sent'`,
          )
          .run(nextAt.toISOString(), error, new Date().toISOString(), id);
      }),
    giveUp: (id, line) =>
      commits.write(() => {
        const now = new Date().toISOString();
        const row = database
          .prepare(
            `UPDATE outbound SET state = 'given_up', claimed_until = NULL, updated_at = ?
             WHERE id = ? AND state <> 'sent' RETURNING *`,
          )
          .get(now, id) as OutboundRow | undefined;
        if (!row) return;
        const lineId = insertLine(row.channel_id, line);
        // The line is carried by a given-up entry, so that no restart tries to send it.
        const entry = { source: row.source, channelId: row.channel_id, kind: "notice" as const };
        insert({ ...entry, action: "send", origin: lineId, body: "{}" }, "given_up", now);
      }),
    unsent: async (source) =>
      (
        database
          .prepare(
            `SELECT * FROM outbound WHERE source = ? AND state IN ('pending', 'sending')
             ORDER BY seq`,
          )
          .all(source) as OutboundRow[]
      ).map(toOutbound),
    unrecorded: async (channelId, limit) => unrecorded(database, channelId, limit),
  };
}

/** The ledger's `unrecorded`: the channel's stored answers no entry carries. */
function unrecorded(
  database: Database.Database,
  channelId: string,
  limit: number,
): UnrecordedMessage[] {
  const kinds = CHAT_MESSAGE_KINDS.map(() => "?").join(", ");
  const rows = database
    .prepare(
      `SELECT id, kind, text, created_at AS createdAt, files FROM messages m
       WHERE m.channel_id = ? AND m.role <> 'user' AND m.kind IN (${kinds})
         AND m.created_at >= coalesce(
           (SELECT min(created_at) FROM outbound WHERE channel_id = ?),
           (SELECT min(created_at) FROM messages u WHERE u.channel_id = ?
              AND u.role = 'user' AND (u.source = ? OR u.source LIKE ?)))
         AND NOT EXISTS (SELECT 1 FROM outbound o WHERE o.origin = m.id)
       ORDER BY m.seq DESC LIMIT ?`,
    )
    .all(
      channelId,
      ...CHAT_MESSAGE_KINDS,
      channelId,
      channelId,
      ...chatSourceOf(channelId),
      limit,
    ) as UnrecordedRow[];
  return rows.reverse().map(toUnrecorded);
}

function sqlitePairings(database: Database.Database, commits: GroupCommit): PairingBook {
  return {
    request: (fields, ttlMs, maxPending) =>
      commits.write(() => {
        const now = new Date();
        const nowText = now.toISOString();
        const mine = database
          .prepare(
            `SELECT * FROM pairings WHERE source = ? AND user_id = ? AND approved_at IS NULL
               AND expires_at > ? ORDER BY created_at DESC LIMIT 1`,
          )
          .get(fields.source, fields.userId, nowText) as PairingRow | undefined;
        if (mine) return toPairing(mine);
        const { waiting } = database
          .prepare(
            `SELECT count(*) AS waiting FROM pairings WHERE source = ? AND approved_at IS NULL
               AND expires_at > ?`,
          )
          .get(fields.source, nowText) as { waiting: number };
        if (waiting >= maxPending) return null;
        const row = database
          .prepare(
            `INSERT INTO pairings (source, code, user_id, chat_id, name, created_at, expires_at)
             VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          )
          .get(
            fields.source,
            pairingCode(),
            fields.userId,
            fields.chatId,
            fields.name,
            nowText,
            new Date(now.getTime() + ttlMs).toISOString(),
          ) as PairingRow;
        return toPairing(row);
      }),
    list: async (source) =>
      (
        database
          .prepare(
            `SELECT * FROM pairings WHERE (? IS NULL OR source = ?)
               AND (approved_at IS NOT NULL OR expires_at > ?) ORDER BY created_at`,
          )
          .all(source ?? null, source ?? null, new Date().toISOString()) as PairingRow[]
      ).map(toPairing),
    approve: (source, code, by) =>
      commits.write(() => {
        const now = new Date().toISOString();
        const row = database
          .prepare(
            `UPDATE pairings SET approved_at = ?, approved_by = ?
             WHERE source = ? AND code = ? AND approved_at IS NULL AND expires_at > ?
             RETURNING *`,
          )
          .get(now, by, source, code.trim().toUpperCase(), now) as PairingRow | undefined;
        return row ? (toPairing(row) as PairingRequest) : null;
      }),
    approved: async (source) =>
      (
        database
          .prepare(
            "SELECT DISTINCT user_id FROM pairings WHERE source = ? AND approved_at IS NOT NULL",
          )
          .all(source) as Array<{ user_id: string }>
      ).map((row) => row.user_id),
  };
}

function sqliteGrants(database: Database.Database, commits: GroupCommit): ChannelGrants {
  return {
    add: (grant) =>
      commits.write(() => {
        database
          .prepare(
            `INSERT OR IGNORE INTO channel_grants (channel_id, tool_name, command, granted_by,
               created_at) VALUES (?, ?, ?, ?, ?)`,
          )
          .run(
            grant.channelId,
            grant.toolName,
            grant.command ?? "",
            grant.grantedBy,
            new Date().toISOString(),
          );
      }),
    list: async (channelId): Promise<ChannelGrant[]> =>
      (
        database
          .prepare("SELECT * FROM channel_grants WHERE channel_id = ? ORDER BY created_at")
          .all(channelId) as GrantRow[]
      ).map(toGrant),
  };
}
