import type pg from "pg";
import { fitsOneNotice } from "./event-notices.js";
import { appendEachNotice, EVENTS_CHANNEL, type Update, updateAlone } from "./lone-writes.js";
import { preparedQuery } from "./prepared-query.js";
import { StatementBatch } from "./statement-batch.js";

/** A new message as `rudder_writes` takes it (see message-writes.ts). */
export interface InsertItem {
  i: string;
  c: string;
  r: string;
  k: string;
  t: string;
  s: string | null;
  o: string;
  a: string;
  d: string | null;
  /** The user message's attachments (JSON), null when none. */
  f: string | null;
  /** A chat message's delivery claim (source, key), finished with the insert. */
  q?: string;
  g?: string;
}

/** One write: a new message, a mark or count, or an append of events (`json`, see event-notices.ts). */
export type Write =
  | { kind: "insert"; item: InsertItem }
  | { kind: "update"; item: Update }
  | { kind: "events"; json: string; count: number };

const WRITES =
  "SELECT rudder_writes($1::json, $2::json, $3::text, $4::text, $5::timestamptz) AS ids";

/**
 * A worker's writes on the path of every message (new messages, delivery marks and started
 * counts, events), of every kind and channel, sent together (`StatementBatch`): what is asked
 * while a statement runs goes in the next one, as one call of `rudder_writes` (migrations.ts).
 * At 600 messages a second a worker sent 1.8 statements a message for these, one batch of each
 * kind in flight at once; mixed, each round trip (two system calls on each side, a wake-up of
 * the server, a commit) carries all three.
 */
export class WriteBatch {
  readonly #batch: StatementBatch<Write, number[] | undefined>;

  constructor(pool: pg.Pool) {
    this.#batch = new StatementBatch(async (writes) => {
      const only = writes.length === 1 ? writes[0] : undefined;
      // One mark or count alone (the usual batch of a worker that is not busy) has a cheaper
      // statement of its own.
      if (only?.kind === "update") {
        await updateAlone(pool, only.item);
        return [undefined];
      }
      const updates: Update[] = [];
      const inserts: InsertItem[] = [];
      const events: string[] = [];
      let count = 0;
      for (const write of writes) {
        if (write.kind === "update") updates.push(write.item);
        else if (write.kind === "insert") inserts.push(write.item);
        else {
          // Each append's JSON array, its brackets taken off, joined into one array.
          events.push(write.json.slice(1, -1));
          count += write.count;
        }
      }
      const eventsJson = events.length === 0 ? null : `[${events.join(",")}]`;
      const oneNotice = eventsJson === null || fitsOneNotice(eventsJson, count);
      const [mixed, each] = await Promise.all([
        updates.length + inserts.length > 0 || (eventsJson !== null && oneNotice)
          ? pool.query<{ ids: string | null }>(
              preparedQuery(WRITES, [
                updates.length === 0 ? null : JSON.stringify(updates),
                inserts.length === 0 ? null : JSON.stringify(inserts),
                oneNotice ? eventsJson : null,
                EVENTS_CHANNEL,
                new Date(),
              ]),
            )
          : undefined,
        // Events too many or too large for one NOTIFY: a statement of their own beside it.
        oneNotice || eventsJson === null ? undefined : appendEachNotice(pool, eventsJson),
      ]);
      const ids = each ?? mixed?.rows[0]?.ids?.split(",").map(Number) ?? [];
      let next = 0;
      return writes.map((write) => {
        if (write.kind !== "events") return undefined;
        next += write.count;
        return ids.slice(next - write.count, next);
      });
    });
  }

  /** Resolves once the write is stored; an append of events gives their ids, in order. */
  add(write: Write): Promise<number[] | undefined> {
    return this.#batch.add(write);
  }
}
