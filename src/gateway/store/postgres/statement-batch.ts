import { isStoreUnavailable } from "../store-unavailable-error.js";

/** Items sent in one statement at most (its JSON parameter stays small enough to parse fast). */
const MOST = 256;

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes of one kind, from any channel, sent together: what is asked in one turn of the event
 * loop goes in one statement, and what is asked while a statement runs goes in the next one
 * (one in flight), so under load a worker sends one statement, one round trip and one commit
 * for many messages, and its writes reach the database in the order they were asked. When a
 * statement of several fails for another reason than the database being away (a bad value in
 * one of them), each is sent again alone, so one bad item fails only its own caller.
 */
export class StatementBatch<Item, Result> {
  readonly #send: (items: Item[]) => Promise<Result[]>;
  #queue: Waiting<Item, Result>[] = [];
  #running = false;

  /** `send` runs one statement for the items and gives one result per item, in their order. */
  constructor(send: (items: Item[]) => Promise<Result[]>) {
    this.#send = send;
  }

  add(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#running) return;
      this.#running = true;
      setImmediate(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MOST);
      await this.#run(batch).catch((error: unknown) => {
        if (batch.length === 1 || isStoreUnavailable(error)) {
          for (const waiting of batch) waiting.reject(error);
          return;
        }
        return this.#eachAlone(batch);
      });
    }
    this.#running = false;
  }

  async #run(batch: Waiting<Item, Result>[]): Promise<void> {
    const results = await this.#send(batch.map((waiting) => waiting.item));
    for (const [index, waiting] of batch.entries()) waiting.resolve(results[index]!);
  }

  async #eachAlone(batch: Waiting<Item, Result>[]): Promise<void> {
    for (const waiting of batch) {
      await this.#run([waiting]).catch(waiting.reject);
    }
  }
}
