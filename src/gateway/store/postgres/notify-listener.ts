import pg from "pg";

/**
 * One `LISTEN` connection on a NOTIFY channel: a client of its own (a pooled one would lose the
 * LISTEN when returned). When the connection is lost it is made again with backoff (0.5 s
 * doubling to 10 s), and `onReconnect` says so, as NOTIFYs sent meanwhile are gone.
 */
export class NotifyListener {
  readonly #url: string;
  readonly #channel: string;
  readonly #onPayload: (payload: string) => void;
  readonly #onReconnect: () => void;
  readonly #logger: (line: string) => void;
  #client: pg.Client | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #delayMs = 500;

  private constructor(
    url: string,
    channel: string,
    onPayload: (payload: string) => void,
    onReconnect: () => void,
    logger: (line: string) => void,
  ) {
    this.#url = url;
    this.#channel = channel;
    this.#onPayload = onPayload;
    this.#onReconnect = onReconnect;
    this.#logger = logger;
  }

  /** Listens on `channel` (a plain identifier) until `close()`. */
  static async listen(
    url: string,
    channel: string,
    onPayload: (payload: string) => void,
    onReconnect: () => void,
    logger: (line: string) => void = () => {},
  ): Promise<NotifyListener> {
    const listener = new NotifyListener(url, channel, onPayload, onReconnect, logger);
    await listener.#connect();
    return listener;
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url });
    client.on("error", (error) => this.#lost(client, error.message));
    client.on("end", () => this.#lost(client, "connection ended"));
    client.on("notification", (notification) => {
      if (notification.channel === this.#channel && notification.payload) {
        this.#onPayload(notification.payload);
      }
    });
    await client.connect();
    await client.query(`LISTEN ${this.#channel}`);
    this.#client = client;
    this.#delayMs = 500;
  }

  #lost(client: pg.Client, reason: string): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    this.#logger(`gateway: lost the ${this.#channel} connection (${reason}); reconnecting`);
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
