/** Open event streams at most, in all; past it a new one is a 503. */
export const DEFAULT_MAX_STREAMS = 512;
/** Open event streams at most from one client address. */
export const DEFAULT_MAX_STREAMS_PER_CLIENT = 64;

/**
 * Counts the open Server-Sent Events streams, in all and per client address, so that a flood
 * of them is refused (each holds a socket, its buffers and a bus subscription) rather than
 * taking the gateway's memory.
 */
export class StreamLimits {
  readonly #maxTotal: number;
  readonly #maxPerClient: number;
  readonly #perClient = new Map<string, number>();
  #open = 0;

  constructor(options: { maxTotal?: number; maxPerClient?: number } = {}) {
    this.#maxTotal = options.maxTotal ?? DEFAULT_MAX_STREAMS;
    this.#maxPerClient = options.maxPerClient ?? DEFAULT_MAX_STREAMS_PER_CLIENT;
  }

  /** How many streams are open now. */
  get open(): number {
    return this.#open;
  }

  /** Takes a place for `client`: the function that gives it back (once), or why there is none. */
  acquire(client: string): { release: () => void } | { refused: string } {
    const mine = this.#perClient.get(client) ?? 0;
    if (this.#open >= this.#maxTotal) {
      return {
        refused: `too many event streams open (${this.#open}, the most is ${this.#maxTotal}: --max-sse)`,
      };
    }
    if (mine >= this.#maxPerClient) {
      return {
        refused: `too many event streams open from ${client} (${mine}, the most per client is ${this.#maxPerClient}: --max-sse-per-client)`,
      };
    }
    this.#open += 1;
    this.#perClient.set(client, mine + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#open -= 1;
        const left = (this.#perClient.get(client) ?? 1) - 1;
        if (left === 0) this.#perClient.delete(client);
        else this.#perClient.set(client, left);
      },
    };
  }
}
