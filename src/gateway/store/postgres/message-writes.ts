import type pg from "pg";
import type { MessageState } from "../../events.js";
import { newMessage } from "../new-message.js";
import type { MessageRecord } from "../store.js";
import { preparedQuery } from "./prepared-query.js";
import { StatementBatch } from "./statement-batch.js";

/** A delivery mark (`s`, the state, and `r`, the run it went to) or a started count (no `s`). */
interface Update {
  i: string;
  s: string | null;
  r: string | null;
}

/**
 * The messages stored in order (`position`), each channel's row made or touched first, in the
 * order of their ids (so two workers' batches over the same channels lock their rows in the same
 * order, and never wait on each other in a circle): one statement however many messages and
 * channels. The records are built here, not read back
 * (`RETURNING *` costs a worker the parsing of every column of every row).
 */
const INSERT = `WITH items AS (
    SELECT * FROM ROWS FROM (json_to_recordset($1::json) AS (i text, c text, r text, k text,
      t text, s text, o text, a timestamptz, d text))
      WITH ORDINALITY AS list(i, c, r, k, t, s, o, a, d, position)
  ),
  channel AS (
    INSERT INTO channels (id, created_at, last_activity_at)
    SELECT c, max(a), max(a) FROM items GROUP BY c ORDER BY c
    ON CONFLICT (id) DO UPDATE SET last_activity_at = excluded.last_activity_at
    RETURNING id
  )
  INSERT INTO messages (id, channel_id, role, kind, text, state, source, created_at, updated_at,
    deliveries, delivered_in)
  SELECT i, channel.id, r, k, t, s, o, a, a, (d IS NOT NULL)::int, d
  FROM items JOIN channel ON channel.id = items.c
  ORDER BY position`;

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

/**
 * The PostgreSQL store's writes of single messages, from every channel, batched (see
 * `StatementBatch`): new messages in one statement, delivery marks and started counts in
 * another (`rudder_message_updates`, migrations.ts). At 500 messages a second a worker sent
 * three statements a message for these; batched, it sends one statement for all that arrive
 * while the previous one runs.
 */
export class MessageWrites {
  /** A message to store: its record, built here, is what the caller gets back. */
  readonly #inserts: StatementBatch<Insert, MessageRecord>;
  readonly #updates: StatementBatch<Update, undefined>;

  constructor(pool: pg.Pool) {
    this.#inserts = new StatementBatch(async (inserts) => {
      await pool.query(preparedQuery(INSERT, [JSON.stringify(inserts.map(insertItem))]));
      return inserts.map(({ record, handedTo }) =>
        handedTo === undefined ? record : { ...record, deliveries: 1 },
      );
    });
    this.#updates = new StatementBatch(async (items) => {
      const only = items.length === 1 ? items[0] : undefined;
      if (only !== undefined) {
        await pool.query(
          only.s === null
            ? preparedQuery(STARTED_ONE, [only.i, only.r])
            : preparedQuery(STATE_ONE, [only.i, only.r, only.s, new Date()]),
        );
        return [undefined];
      }
      await pool.query(
        preparedQuery("SELECT rudder_message_updates($1::json, $2::timestamptz)", [
          JSON.stringify(items),
          new Date(),
        ]),
      );
      return items.map(() => undefined);
    });
  }

  insert(
    channelId: string,
    role: MessageRecord["role"],
    kind: MessageRecord["kind"],
    text: string,
    state: MessageState | null,
    source: string,
    /** The run that hands it to an agent at once: counted as its delivery in the insert. */
    handedTo?: string,
  ): Promise<MessageRecord> {
    return this.#inserts.add({
      record: newMessage({ channelId, role, kind, text, state, replyTo: null, source }),
      handedTo,
    });
  }

  /** The message's state; with `run`, counted as delivered to that gateway run (once a run). */
  setState(messageId: string, state: MessageState, run?: string): Promise<void> {
    return this.#updates.add({ i: messageId, s: state, r: run ?? null });
  }

  /** The message counted as started on by an agent of `run` (once a run). */
  countStarted(messageId: string, run: string): Promise<void> {
    return this.#updates.add({ i: messageId, s: null, r: run });
  }
}

interface Insert {
  record: MessageRecord;
  handedTo: string | undefined;
}

function insertItem({ record, handedTo }: Insert) {
  return {
    i: record.id,
    c: record.channelId,
    r: record.role,
    k: record.kind,
    t: record.text,
    s: record.state,
    o: record.source,
    a: record.createdAt,
    d: handedTo ?? null,
  };
}
