import pg from "pg";

/** The NOTIFY channel every worker listens on; each wake-up names the worker it is for. */
export const WAKE_CHANNEL = "rudder_wake";

interface WakePayload {
  to: string;
  message: string;
}

/**
 * One worker's `LISTEN` connection: a client of its own (a pooled one would lose the LISTEN
 * when returned). When the connection is lost it is made again with backoff (0.5 s doubling
 * to 10 s), and `onReconnect` says so, as NOTIFYs sent meanwhile are gone.
 */
export class WakeUps {
  readonly #url: string;
  readonly #worker: string;
  readonly #onWake: (messageId: string) => void;
  readonly #onReconnect: () => void;
  readonly #logger: (line: string) => void;
  #client: pg.Client | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #delayMs = 500;

  private constructor(
    url: string,
    worker: string,
    onWake: (messageId: string) => void,
    onReconnect: () => void,
    logger: (line: string) => void,
  ) {
    this.#url = url;
    this.#worker = worker;
    this.#onWake = onWake;
    this.#onReconnect = onReconnect;
    this.#logger = logger;
  }

  static async listen(
    url: string,
    worker: string,
    onWake: (messageId: string) => void,
    onReconnect: () => void,
    logger: (line: string) => void = () => {},
  ): Promise<WakeUps> {
    const wakeUps = new WakeUps(url, worker, onWake, onReconnect, logger);
    await wakeUps.#connect();
    return wakeUps;
  }

  /** The statement and values that wake `owner` for `messageId`. */
  static notification(owner: string, messageId: string): [string, unknown[]] {
    const payload: WakePayload = { to: owner, message: messageId };
    return ["SELECT pg_notify($1, $2)", [WAKE_CHANNEL, JSON.stringify(payload)]];
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url });
    client.on("error", (error) => this.#lost(client, error.message));
    client.on("end", () => this.#lost(client, "connection ended"));
    client.on("notification", (notification) => {
      if (notification.channel !== WAKE_CHANNEL || !notification.payload) return;
      try {
        const payload = JSON.parse(notification.payload) as WakePayload;
        if (payload.to === this.#worker && typeof payload.message === "string") {
          this.#onWake(payload.message);
        }
      } catch {
        // Not ours to read; another rudder version's, perhaps.
      }
    });
    await client.connect();
    await client.query(`LISTEN ${WAKE_CHANNEL}`);
    this.#client = client;
    this.#delayMs = 500;
  }

  #lost(client: pg.Client, reason: string): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    this.#logger(`gateway: lost the wake-up connection (${reason}); reconnecting`);
    this.#schedule();
  }

  #schedule(): void {
    this.#retry = setTimeout(() => {
      this.#connect().then(
        () => this.#onReconnect(),
        () => {
          this.#delayMs = Math.min(this.#delayMs * 2, 10_000);
          this.#schedule();
        },
      );
    }, this.#delayMs);
    this.#retry.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#client?.end().catch(() => {});
    this.#client = undefined;
  }
}
