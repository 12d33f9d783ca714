import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { GatewayEvent } from "../../events.js";
import type { SharedEvent } from "../shared-store.js";
import { isStoreUnavailable } from "../store-unavailable-error.js";
import { noticeItemsJson, readNotice } from "./event-notices.js";
import { EVENTS_CHANNEL } from "./lone-writes.js";
import type { NotifyListener } from "./notify-listener.js";
import type { WriteBatch } from "./write-batch.js";

/** How long stored events are kept for a reconnecting client to resume from. */
const KEEP_HOURS = 1;
/** Old events are pruned once per this many appends by a worker. */
const PRUNE_EVERY = 500;

/**
 * The channels' events in the `events` table, so that every worker streams every channel's
 * events with ids that mean the same on all of them. An append takes the channel's advisory
 * lock for its statement, so one channel's events commit in id order whichever worker writes
 * them, and a client resuming after an id misses none. An append goes with the worker's other
 * writes of the moment (`WriteBatch`), and each statement's events are announced by one
 * NOTIFY carrying their ids and events, so that each worker's listening client reads one message
 * however many events and channels the append held (an append past NOTIFY's 8000 bytes: one
 * NOTIFY per event, a large event by its id, read back from the table).
 */
export class EventLog {
  readonly #pool: pg.Pool;
  readonly #batch: WriteBatch;
  #appends = 0;

  constructor(pool: pg.Pool, batch: WriteBatch) {
    this.#pool = pool;
    this.#batch = batch;
  }

  /**
   * Stores events, of any channels, in order, in one statement (one round trip however many);
   * returns their ids. Each channel's lock is taken first, in the order of the locks' keys
   * (so two workers appending for the same channels cannot wait on each other).
   */
  async append(events: GatewayEvent[]): Promise<number[]> {
    if (events.length === 0) return [];
    const ids = await this.#batch.add({
      kind: "events",
      json: noticeItemsJson(events),
      count: events.length,
    });
    this.#appends += events.length;
    if (this.#appends >= PRUNE_EVERY) {
      this.#appends = 0;
      void this.prune().catch(() => {});
    }
    return ids ?? [];
  }

  /** The channel's events after `after` (its newest `limit` when undefined), oldest first. */
  async after(channelId: string, after: number | undefined, limit: number): Promise<SharedEvent[]> {
    const { rows } = await this.#pool.query<{ id: string; event: GatewayEvent }>(
      `SELECT id, event FROM (
         SELECT id, event FROM events WHERE channel_id = $1 AND id > $2 ORDER BY id DESC LIMIT $3
       ) newest ORDER BY id`,
      [channelId, after ?? 0, limit],
    );
    return rows.map((row) => ({ id: Number(row.id), event: row.event }));
  }

  /** Every channel's events after the global id `after`, oldest first, at most `limit`. */
  async since(after: number, limit: number): Promise<SharedEvent[]> {
    const { rows } = await this.#pool.query<{ id: string; event: GatewayEvent }>(
      "SELECT id, event FROM events WHERE id > $1 ORDER BY id LIMIT $2",
      [after, limit],
    );
    return rows.map((row) => ({ id: Number(row.id), event: row.event }));
  }

  /**
   * This database's name for its event stream (in SSE ids, `<name>-<id>`): made by the first
   * worker, the same for every worker on it, another for another database, so an id a client
   * kept from one database is not taken as a position in another's stream.
   */
  async streamName(): Promise<string> {
    const candidate = `shared${randomBytes(4).toString("hex")}`;
    await this.#pool.query(
      "INSERT INTO settings (name, value) VALUES ('event_stream', $1) ON CONFLICT (name) DO NOTHING",
      [candidate],
    );
    const { rows } = await this.#pool.query<{ value: string }>(
      "SELECT value FROM settings WHERE name = 'event_stream'",
    );
    return rows[0]?.value ?? candidate;
  }

  /** Deletes events older than `hours`; returns how many. */
  async prune(hours = KEEP_HOURS): Promise<number> {
    const result = await this.#pool.query(
      "DELETE FROM events WHERE created_at < now() - make_interval(hours => $1)",
      [hours],
    );
    return result.rowCount ?? 0;
  }

  /**
   * Calls `onEvent` with every event any worker appends, in commit order (a large one is read
   * back from the table first, keeping that order).
   */
  listen(
    notices: NotifyListener,
    onEvent: (event: SharedEvent) => void,
    onReconnect: () => void,
    logger: (line: string) => void,
  ): Promise<{ close(): Promise<void> }> {
    let chain = Promise.resolve();
    /** Events being read back, and those queued behind them to keep the order. */
    let queued = 0;
    const failed = (id: number, error: unknown) => {
      // An outage is logged once, by the health; the reconnect's catch-up reads it again.
      if (!isStoreUnavailable(error))
        logger(`gateway: could not read event ${id}: ${String(error)}`);
    };
    const onPayload = (text: string) => {
      for (const { id, e } of readNotice(text)) {
        if (e !== undefined && queued === 0) {
          try {
            onEvent({ id, event: e });
          } catch (error) {
            failed(id, error);
          }
          continue;
        }
        queued += 1;
        chain = chain
          .then(async () => {
            const event = e ?? (await this.#read(id));
            if (event) onEvent({ id, event });
          })
          .catch((error: unknown) => failed(id, error))
          .finally(() => {
            queued -= 1;
          });
      }
    };
    return notices.listen(EVENTS_CHANNEL, onPayload, onReconnect);
  }

  async #read(id: number): Promise<GatewayEvent | undefined> {
    const { rows } = await this.#pool.query<{ event: GatewayEvent }>(
      "SELECT event FROM events WHERE id = $1",
      [id],
    );
    return rows[0]?.event;
  }
}
