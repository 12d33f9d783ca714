import type pg from "pg";
import type { MessageState } from "../../events.js";
import { newMessage } from "../new-message.js";
import type { MessageRecord } from "../store.js";
import { preparedQuery } from "./prepared-query.js";
import type { InsertItem, Update, WriteBatch } from "./write-batch.js";

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
 * The PostgreSQL store's writes of single messages, from every channel, batched with the
 * worker's other writes (`WriteBatch`): new messages, each channel's row made or touched first
 * in the order of their ids (so two workers' batches over the same channels lock their rows in
 * the same order, and never wait on each other in a circle), and delivery marks and started
 * counts. The records are built here, not read back (`RETURNING *` costs a worker the parsing of
 * every column of every row).
 */
export class MessageWrites {
  readonly #batch: WriteBatch;

  constructor(batch: WriteBatch) {
    this.#batch = batch;
  }

  async insert(
    channelId: string,
    role: MessageRecord["role"],
    kind: MessageRecord["kind"],
    text: string,
    state: MessageState | null,
    source: string,
    /** The run that hands it to an agent at once: counted as its delivery in the insert. */
    handedTo?: string,
  ): Promise<MessageRecord> {
    const record = newMessage({ channelId, role, kind, text, state, replyTo: null, source });
    await this.#batch.add({ kind: "insert", item: insertItem(record, handedTo) });
    return handedTo === undefined ? record : { ...record, deliveries: 1 };
  }

  /** The message's state; with `run`, counted as delivered to that gateway run (once a run). */
  async setState(messageId: string, state: MessageState, run?: string): Promise<void> {
    await this.#batch.add({ kind: "update", item: { i: messageId, s: state, r: run ?? null } });
  }

  /** The message counted as started on by an agent of `run` (once a run). */
  async countStarted(messageId: string, run: string): Promise<void> {
    await this.#batch.add({ kind: "update", item: { i: messageId, s: null, r: run } });
  }
}

function insertItem(record: MessageRecord, handedTo: string | undefined): InsertItem {
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
