import { randomUUID } from "node:crypto";
import type pg from "pg";
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
  ChannelGrants,
  NewOutbound,
  OutboundLedger,
  PairingBook,
  SourceStore,
} from "../source-store.js";
import { postgresInboundDeliveries } from "./postgres-inbound-deliveries.js";

/** Stores a line in a channel's history (an `error` message). */
export type InsertLine = (channelId: string, text: string) => Promise<{ id: string }>;

/**
 * The chat sources' tables in the database every worker shares. A worker takes an entry with
 * `claim` (one statement decides between workers); a `sending` entry whose worker died is
 * taken again once its claim has run out, marked "may repeat".
 */
export function postgresSourceStore(pool: pg.Pool, insertLine: InsertLine): SourceStore {
  return {
    outbound: postgresLedger(pool, insertLine),
    deliveries: postgresInboundDeliveries(pool),
    pairings: postgresPairings(pool),
    grants: postgresGrants(pool),
  };
}

async function insertEntry(pool: pg.Pool, entry: NewOutbound, state: string) {
  const { rows } = await pool.query<OutboundRow>(
    `INSERT INTO outbound (id, source, channel_id, kind, action, target, origin, body, state,
       next_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now(),
       now()) ON CONFLICT DO NOTHING RETURNING *`,
    [randomUUID(), ...outboundValues(entry), state],
  );
  return rows[0] ? toOutbound(rows[0]) : null;
}

function postgresLedger(pool: pg.Pool, insertLine: InsertLine): OutboundLedger {
  const one = async (sql: string, values: unknown[]) => {
    const { rows } = await pool.query<OutboundRow>(sql, values);
    return rows[0] ? toOutbound(rows[0]) : null;
  };
  return {
    recordAll: async (entries) => {
      if (entries.length === 0) return [];
      // One statement, so all or none; a conflict on `origin` leaves that entry out.
      const values: unknown[] = [];
      const rows = entries.map((entry, index) => {
        values.push(randomUUID(), ...outboundValues(entry), index);
        const at = index * 9;
        const place = (offset: number) => `$${at + offset}`;
        return `(${[1, 2, 3, 4, 5, 6, 7, 8].map(place).join(", ")}, ${place(9)}::int)`;
      });
      const { rows: recorded } = await pool.query<OutboundRow & { seq: string }>(
        `INSERT INTO outbound (id, source, channel_id, kind, action, target, origin, body, state,
           next_at, created_at, updated_at)
         SELECT id, source, channel_id, kind, action, target, origin, body, 'pending', now(),
           now(), now()
         FROM (VALUES ${rows.join(", ")}) AS list(id, source, channel_id, kind, action, target,
           origin, body, position)
         ORDER BY position
         ON CONFLICT DO NOTHING RETURNING *`,
        values,
      );
      return recorded.sort((a, b) => Number(a.seq) - Number(b.seq)).map(toOutbound);
    },
    record: async (entry) => {
      if (entry.action === "edit" && entry.target !== undefined) {
        const waiting = await one(
          `UPDATE outbound SET body = $1, updated_at = now()
           WHERE target = $2 AND action = 'edit' AND state = 'pending' RETURNING *`,
          [entry.body, entry.target],
        );
        if (waiting) return waiting;
      }
      return insertEntry(pool, entry, "pending");
    },
    get: (id) => one("SELECT * FROM outbound WHERE id = $1", [id]),
    claim: (id, worker, leaseMs) =>
      one(
        `UPDATE outbound SET
           may_repeat = may_repeat OR (state = 'sending' AND action = 'send'),
           state = 'sending', attempts = attempts + 1, claimed_by = $2,
           claimed_until = now() + $3 * interval '1 millisecond', updated_at = now()
         WHERE id = $1 AND (state = 'pending' OR (state = 'sending'
           AND (claimed_until IS NULL OR claimed_until < now() OR claimed_by = $2)))
         RETURNING *`,
        [id, worker, leaseMs],
      ),
    sent: async (id, platformId) => {
      await pool.query(
        `UPDATE outbound SET state = 'sent', platform_id = $2, claimed_until = NULL,
           updated_at = now() WHERE id = $1`,
        [id, platformId],
      );
    },
    retry: async (id, nextAt, error) => {
      await pool.query(
        `UPDATE outbound SET state = 'pending', next_at = $2, last_error = $3,
           claimed_until = NULL, updated_at = now() WHERE id = $1 AND state <> 'sent'`,
        [id, nextAt, error],
      );
    },
    giveUp: async (id, line) => {
      const entry = await one(
        `UPDATE outbound SET state = 'given_up', claimed_until = NULL, updated_at = now()
         WHERE id = $1 AND state NOT IN ('sent', 'given_up') RETURNING *`,
        [id],
      );
      if (!entry) return;
      const { id: lineId } = await insertLine(entry.channelId, line);
      await insertEntry(
        pool,
        { ...entry, kind: "notice", action: "send", target: undefined, origin: lineId },
        "given_up",
      );
    },
    unsent: async (source) => {
      const { rows } = await pool.query<OutboundRow>(
        `SELECT * FROM outbound WHERE source = $1 AND state IN ('pending', 'sending')
         ORDER BY seq`,
        [source],
      );
      return rows.map(toOutbound);
    },
    unrecorded: async (channelId, limit) => {
      const { rows } = await pool.query<UnrecordedRow>(
        `SELECT id, kind, text, created_at AS "createdAt", files FROM messages m
         WHERE m.channel_id = $1 AND m.role <> 'user' AND m.kind = ANY($2)
           AND m.created_at >= coalesce(
             (SELECT min(created_at) FROM outbound WHERE channel_id = $1),
             (SELECT min(created_at) FROM messages u WHERE u.channel_id = $1
                AND u.role = 'user' AND (u.source = $4 OR u.source LIKE $5)))
           AND NOT EXISTS (SELECT 1 FROM outbound o WHERE o.origin = m.id)
         ORDER BY m.seq DESC LIMIT $3`,
        [channelId, CHAT_MESSAGE_KINDS, limit, ...chatSourceOf(channelId)],
      );
      return rows.reverse().map(toUnrecorded);
    },
  };
}

function postgresPairings(pool: pg.Pool): PairingBook {
  return {
    request: async (fields, ttlMs, maxPending) => {
      const { rows: mine } = await pool.query<PairingRow>(
        `SELECT * FROM pairings WHERE source = $1 AND user_id = $2 AND approved_at IS NULL
           AND expires_at > now() ORDER BY created_at DESC LIMIT 1`,
        [fields.source, fields.userId],
      );
      if (mine[0]) return toPairing(mine[0]);
      const { rows } = await pool.query<PairingRow>(
        `INSERT INTO pairings (source, code, user_id, chat_id, name, created_at, expires_at)
         SELECT $1, $2, $3, $4, $5, now(), now() + $6 * interval '1 millisecond'
         WHERE (SELECT count(*) FROM pairings WHERE source = $1 AND approved_at IS NULL
                AND expires_at > now()) < $7
         RETURNING *`,
        [
          fields.source,
          pairingCode(),
          fields.userId,
          fields.chatId,
          fields.name,
          ttlMs,
          maxPending,
        ],
      );
      return rows[0] ? toPairing(rows[0]) : null;
    },
    list: async (source) => {
      const { rows } = await pool.query<PairingRow>(
        `SELECT * FROM pairings WHERE ($1::text IS NULL OR source = $1)
           AND (approved_at IS NOT NULL OR expires_at > now()) ORDER BY created_at`,
        [source ?? null],
      );
      return rows.map(toPairing);
    },
    approve: async (source, code, by) => {
      const { rows } = await pool.query<PairingRow>(
        `UPDATE pairings SET approved_at = now(), approved_by = $3
         WHERE source = $1 AND code = $2 AND approved_at IS NULL AND expires_at > now()
         RETURNING *`,
        [source, code.trim().toUpperCase(), by],
      );
      return rows[0] ? toPairing(rows[0]) : null;
    },
    approved: async (source) => {
      const { rows } = await pool.query<{ user_id: string }>(
        "SELECT DISTINCT user_id FROM pairings WHERE source = $1 AND approved_at IS NOT NULL",
        [source],
      );
      return rows.map((row) => row.user_id);
    },
  };
}

function postgresGrants(pool: pg.Pool): ChannelGrants {
  return {
    add: async (grant) => {
      await pool.query(
        `INSERT INTO channel_grants (channel_id, tool_name, command, granted_by, created_at)
         VALUES ($1, $2, $3, $4, now()) ON CONFLICT DO NOTHING`,
        [grant.channelId, grant.toolName, grant.command ?? "", grant.grantedBy],
      );
    },
    list: async (channelId) => {
      const { rows } = await pool.query<GrantRow>(
        "SELECT * FROM channel_grants WHERE channel_id = $1 ORDER BY created_at",
        [channelId],
      );
      return rows.map(toGrant);
    },
  };
}
