/**
 * Spend stored as it happens (see `SpendEntry`): a wake-up's and a `/compact`'s once their
 * result says it, and a running turn's after each of its model calls, so that a gateway killed
 * mid-turn (SIGKILL, a power cut) still counts what the turn spent before it. The turn's own
 * record replaces that entry once the turn is settled. A write that fails is logged: spend is
 * never a reason to fail a turn. A write given up because the store is unavailable is not: the
 * store's own lines say so, and a shutdown's one line names what it did not store.
 */
import { randomUUID } from "node:crypto";
import type { GatewayStore, SpendEntry } from "../store/store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";
import type { TurnMeter } from "./turn-meter.js";

export type SpendStore = Pick<GatewayStore, "putSpend" | "deleteSpend">;

export class SpendLedger {
  readonly #store: SpendStore;
  readonly #logger: ((line: string) => void) | undefined;

  constructor(store: SpendStore, logger?: (line: string) => void) {
    this.#store = store;
    this.#logger = logger;
  }

  /** Stores `entry`; resolves once it is written or its failure logged (never rejects). */
  put(entry: SpendEntry): Promise<void> {
    return this.#store.putSpend(entry).catch((error: unknown) => {
      if (isStoreUnavailable(error)) return;
      this.#logger?.(`gateway: spend of ${entry.channelId} not stored: ${String(error)}`);
    });
  }

  /** The entry of a turn metered by `meter`, written as it spends. */
  running(meter: TurnMeter): RunningSpend {
    return new RunningSpend(meter, this, (id) =>
      this.#store.deleteSpend(id).catch((error: unknown) => {
        this.#logger?.(`gateway: spend entry ${id} not removed: ${String(error)}`);
      }),
    );
  }
}

/** One running turn's entry: its writes one after the other, the last one its latest spend. */
export class RunningSpend {
  readonly #meter: TurnMeter;
  readonly #ledger: SpendLedger;
  readonly #delete: (id: string) => Promise<void>;
  readonly #id = `turn:${randomUUID()}`;
  #written = { usd: 0, tokens: 0 };
  #writes: Promise<void> = Promise.resolve();

  constructor(meter: TurnMeter, ledger: SpendLedger, remove: (id: string) => Promise<void>) {
    this.#meter = meter;
    this.#ledger = ledger;
    this.#delete = remove;
  }

  /** Writes the turn's spend so far when it grew since the last write. */
  progress(): void {
    const { usd, tokens, channelId, binding } = this.#meter;
    if (usd === this.#written.usd && tokens === this.#written.tokens) return;
    this.#written = { usd, tokens };
    const entry: SpendEntry = {
      id: this.#id,
      channelId,
      binding,
      kind: "turn",
      costUsd: usd,
      inputTokens: this.#meter.inputTokens,
      outputTokens: this.#meter.outputTokens,
    };
    this.#writes = this.#writes.then(() => this.#ledger.put(entry));
  }

  /**
   * The turn is over. `recorded`: a settled result's record holds its spend now, so the entry
   * goes; otherwise (a crash, a stop without a result, a gateway closing) it stays, the only
   * record of what the turn spent.
   */
  finish(recorded: boolean): Promise<void> {
    this.progress();
    const written = this.#written.usd > 0 || this.#written.tokens > 0;
    if (recorded && written) this.#writes = this.#writes.then(() => this.#delete(this.#id));
    return this.#writes;
  }
}
