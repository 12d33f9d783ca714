import pg from "pg";
import { Backoff } from "../backoff.js";
import type { StoreHealth } from "../store-health.js";

/** How long making the listening connection may take before it counts as failed. */
const CONNECT_TIMEOUT_MS = 5000;

/**
 * One `LISTEN` connection on a NOTIFY channel: a client of its own (a pooled one would lose the
 * LISTEN when returned). When the connection is lost it is made again with capped, jittered
 * backoff (see `Backoff`), and `onReconnect` says so, as NOTIFYs sent meanwhile are gone: the
 * caller reads what it missed from the tables. With `health`, a lost connection makes the
 * store check itself, and the loss is logged only when the store is otherwise fine (an outage
 * is logged once, by the health).
 */
export class NotifyListener {
  readonly #url: string;
  readonly #channel: string;
  readonly #onPayload: (payload: string) => void;
  readonly #onReconnect: () => void;
  readonly #logger: (line: string) => void;
  readonly #health: StoreHealth | undefined;
  readonly #backoff = new Backoff(250, 5000);
  #client: pg.Client | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

  private constructor(
    url: string,
    channel: string,
    onPayload: (payload: string) => void,
    onReconnect: () => void,
    logger: (line: string) => void,
    health: StoreHealth | undefined,
  ) {
    this.#url = url;
    this.#channel = channel;
    this.#onPayload = onPayload;
    this.#onReconnect = onReconnect;
    this.#logger = logger;
    this.#health = health;
  }

  /** Listens on `channel` (a plain identifier) until `close()`. */
  static async listen(
    url: string,
    channel: string,
    onPayload: (payload: string) => void,
    onReconnect: () => void,
    logger: (line: string) => void = () => {},
    health?: StoreHealth,
  ): Promise<NotifyListener> {
    const listener = new NotifyListener(url, channel, onPayload, onReconnect, logger, health);
    await listener.#connect();
    return listener;
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
      if (notification.channel === this.#channel && notification.payload) {
        this.#onPayload(notification.payload);
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch (error) {
      client.end().catch(() => {});
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#backoff.reset();
  }

  #lost(client: pg.Client, reason: string): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    const health = this.#health;
    const report = () =>
      this.#logger(`gateway: lost the ${this.#channel} connection (${reason}); reconnecting`);
    if (health === undefined) report();
    else void health.check().then((up) => up && report());
    this.#schedule();
  }

  #schedule(): void {
    this.#retry = setTimeout(() => {
      this.#connect().then(
        () => {
          if (!this.#closed) this.#onReconnect();
        },
        () => {
          if (!this.#closed) this.#schedule();
        },
      );
    }, this.#backoff.next());
    this.#retry.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#client?.end().catch(() => {});
    this.#client = undefined;
  }
}
