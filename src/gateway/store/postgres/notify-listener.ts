import pg from "pg";
import { Backoff } from "../backoff.js";
import type { StoreHealth } from "../store-health.js";

/** How long making the listening connection may take before it counts as failed. */
const CONNECT_TIMEOUT_MS = 5000;

interface Subscription {
  onPayload: (payload: string) => void;
  onReconnect: () => void;
  /** Subscribed when the connection was lost: told when it is back. */
  missed: boolean;
}

/**
 * A worker's one `LISTEN` connection, for every NOTIFY channel it listens on (wake-ups, events,
 * schedules, permission answers): a client of its own (a pooled one would lose the LISTEN when
 * returned). One connection rather than one per channel because PostgreSQL wakes every
 * listening backend of the database at each commit that notifies, whatever it listens on: the
 * server's work per notifying commit grows with the listening connections, not the channels.
 * When the connection is lost it is made again with capped, jittered backoff (see `Backoff`),
 * LISTENs on every channel again, and each subscription's `onReconnect` says so, as NOTIFYs
 * sent meanwhile are gone: the caller reads what it missed from the tables. With `health`, a
 * lost connection makes the store check itself, and the loss is logged only when the store is
 * otherwise fine (an outage is logged once, by the health).
 */
export class NotifyListener {
  readonly #url: string;
  readonly #logger: (line: string) => void;
  readonly #health: StoreHealth | undefined;
  readonly #backoff = new Backoff(250, 5000);
  readonly #channels = new Map<string, Set<Subscription>>();
  #client: pg.Client | undefined;
  /** The connection being made (at the first subscription, or a new one's while it is lost). */
  #connecting: Promise<void> | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  /** The LISTENs and UNLISTENs sent on the connection, one after the other. */
  #sent: Promise<unknown> = Promise.resolve();

  constructor(url: string, logger: (line: string) => void = () => {}, health?: StoreHealth) {
    this.#url = url;
    this.#logger = logger;
    this.#health = health;
  }

  /**
   * Calls `onPayload` with each notification on `channel` (a plain identifier) from now until
   * the returned `close()`, and `onReconnect` after the connection was lost and made again;
   * rejects when the connection cannot be made or the LISTEN fails.
   */
  async listen(
    channel: string,
    onPayload: (payload: string) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }> {
    if (this.#closed) throw new Error("the LISTEN connection is closed");
    const subscription: Subscription = { onPayload, onReconnect, missed: false };
    let subscribers = this.#channels.get(channel);
    const first = subscribers === undefined;
    if (subscribers === undefined) {
      subscribers = new Set();
      this.#channels.set(channel, subscribers);
    }
    subscribers.add(subscription);
    try {
      const client = this.#client;
      // While a connection is being made, the channels added meanwhile are listened on
      // before it counts as made (see #connect).
      // Another subscriber's LISTEN of the channel may still be on its way: what was sent is
      // answered first.
      if (client === undefined) await this.#connectNow();
      else if (first) await this.#send(client, `LISTEN ${channel}`);
      else await this.#sent;
    } catch (error) {
      this.#unsubscribe(channel, subscription);
      throw error;
    }
    return { close: async () => this.#unsubscribe(channel, subscription) };
  }

  #unsubscribe(channel: string, subscription: Subscription): void {
    const subscribers = this.#channels.get(channel);
    if (!subscribers?.delete(subscription) || subscribers.size > 0) return;
    this.#channels.delete(channel);
    if (this.#channels.size > 0) {
      if (this.#client) this.#send(this.#client, `UNLISTEN ${channel}`).catch(() => {});
      return;
    }
    // Nobody listens any more: no connection kept, none retried.
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const client = this.#client;
    this.#client = undefined;
    client?.end().catch(() => {});
  }

  /** Sends `text` on `client` once what was sent before is answered (one query at a time). */
  #send(client: pg.Client, text: string): Promise<unknown> {
    const sent = this.#sent.then(() => client.query(text));
    this.#sent = sent.catch(() => {});
    return sent;
  }

  /** Makes the connection now, or waits for the one being made. */
  async #connectNow(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    await this.#connecting;
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    client.on("error", (error) => this.#lost(client, error.message));
    client.on("end", () => this.#lost(client, "connection ended"));
    client.on("notification", (notification) => {
      const subscribers = this.#channels.get(notification.channel);
      if (subscribers === undefined || !notification.payload) return;
      for (const subscriber of subscribers) subscriber.onPayload(notification.payload);
    });
    try {
      await client.connect();
      // Every channel in one round trip, then those first subscribed to meanwhile.
      const listened = new Set<string>();
      for (;;) {
        const missing = [...this.#channels.keys()].filter((channel) => !listened.has(channel));
        if (missing.length === 0) break;
        await client.query(missing.map((channel) => `LISTEN ${channel};`).join(" "));
        for (const channel of missing) listened.add(channel);
      }
    } catch (error) {
      client.end().catch(() => {});
      throw error;
    }
    if (this.#closed || this.#channels.size === 0) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#sent = Promise.resolve();
    this.#backoff.reset();
    clearTimeout(this.#retry);
    this.#retry = undefined;
    for (const subscribers of this.#channels.values()) {
      for (const subscriber of subscribers) {
        if (!subscriber.missed) continue;
        subscriber.missed = false;
        subscriber.onReconnect();
      }
    }
  }

  #lost(client: pg.Client, reason: string): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    for (const subscribers of this.#channels.values()) {
      for (const subscriber of subscribers) subscriber.missed = true;
    }
    const channels = [...this.#channels.keys()].join(", ");
    const health = this.#health;
    const report = () =>
      this.#logger(`gateway: lost the LISTEN connection (${channels}) (${reason}); reconnecting`);
    if (health === undefined) report();
    else void health.check().then((up) => up && report());
    this.#schedule();
  }

  #schedule(): void {
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      this.#connectNow().catch(() => {
        if (!this.#closed && this.#channels.size > 0 && this.#client === undefined) {
          this.#schedule();
        }
      });
    }, this.#backoff.next());
    this.#retry.unref();
  }

  /** Ends the connection and every subscription. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#channels.clear();
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }
}
