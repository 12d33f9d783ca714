/** What `system/init` lists once the session is ready. */
export interface PreparedSession {
  tools: string[];
  mcpServers: { name: string; status: string }[];
}

/** Gets the session ready (starts MCP servers), adding those an `initialize` request sent. */
export type PrepareSession = (
  initializeMcpServers: Record<string, unknown> | undefined,
) => Promise<PreparedSession>;

interface Held {
  text: string;
  uuid: string | undefined;
}

/**
 * Runs `prepare` once, at `initialize` or at the first message, and holds the
 * messages that come before it resolves, delivering them after in order. A
 * front end without `prepare` is ready from the start. Never rejects: a
 * failed `prepare` is a warning and the session goes on without its servers.
 */
export class SessionPreparation {
  readonly #prepare: PrepareSession | undefined;
  readonly #deliver: (text: string, uuid: string | undefined) => void;
  readonly #onPrepared: (prepared: PreparedSession) => void;
  readonly #warn: (message: string) => void;
  readonly #held: Held[] = [];
  #started: Promise<void> | undefined;
  #ready: boolean;

  constructor(options: {
    prepare: PrepareSession | undefined;
    deliver: (text: string, uuid: string | undefined) => void;
    onPrepared: (prepared: PreparedSession) => void;
    warn: (message: string) => void;
  }) {
    this.#prepare = options.prepare;
    this.#deliver = options.deliver;
    this.#onPrepared = options.onPrepared;
    this.#warn = options.warn;
    this.#ready = options.prepare === undefined;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Uuids of the messages held until the session is ready. */
  heldUuids(): string[] {
    return this.#held.flatMap((message) => (message.uuid === undefined ? [] : [message.uuid]));
  }

  /** Holds a message that came before the session was ready; `start` starts `prepare`. */
  hold(text: string, uuid: string | undefined, start: boolean): void {
    this.#held.push({ text, uuid });
    if (start) void this.start(undefined);
  }

  /**
   * Starts `prepare` (once); resolves when the session is ready, true when it took
   * `servers` (an `initialize` after that point is too late for them).
   */
  start(servers: Record<string, unknown> | undefined): Promise<boolean> {
    const prepare = this.#prepare;
    if (this.#started !== undefined || prepare === undefined) {
      if (servers !== undefined) {
        this.#warn(
          prepare === undefined
            ? "this front end starts no MCP servers; those sent in initialize are ignored"
            : "MCP servers sent in initialize after the session was started are ignored",
        );
      }
      return (this.#started ?? Promise.resolve()).then(() => false);
    }
    this.#started = prepare(servers).then(
      (prepared) => {
        this.#onPrepared(prepared);
        this.#release();
      },
      (error: unknown) => {
        this.#warn(
          `getting the session ready failed: ${error instanceof Error ? error.message : String(error)}`,
        );
        this.#release();
      },
    );
    return this.#started.then(() => servers !== undefined);
  }

  /** Input has ended: get ready if messages are held, and resolve once they are delivered. */
  async settle(): Promise<void> {
    await (this.#held.length > 0 ? this.start(undefined) : this.#started);
  }

  #release(): void {
    this.#ready = true;
    for (const message of this.#held.splice(0)) this.#deliver(message.text, message.uuid);
  }
}
