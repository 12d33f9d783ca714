import type { WorkerLeases } from "../store/shared-store.js";

/** A renewal's answer: when it was asked for, its mark (see `renewing`), the leases it kept. */
export interface Renewal {
  asked: number;
  mark: number;
  renewed: string[];
}

/**
 * When this worker's channel leases were last confirmed, taken (`claim`) or renewed, by its own
 * clock: the database's expiry is at least a lease after that. And the order of claims and
 * renewals: a renewal's answer lists the leases the database held when it ran, so a channel
 * claimed while that renewal was on its way may be missing from it and is not lost.
 */
export class LeaseConfirmations {
  /** A third of a lease: a lease confirmed more recently than that is not asked for again. */
  readonly #freshMs: number;
  readonly #confirmedAt = new Map<string, number>();
  /** Claims granted so far, counted as they are answered. */
  #claims = 0;
  /** Each channel's place in that count when its last claim was granted. */
  readonly #claimedAs = new Map<string, number>();

  constructor(leaseSeconds: number) {
    this.#freshMs = (leaseSeconds * 1000) / 3;
  }

  /** Whether the channel's lease was confirmed less than a third of a lease ago. */
  fresh(channelId: string): boolean {
    const confirmedAt = this.#confirmedAt.get(channelId);
    return confirmedAt !== undefined && Date.now() - confirmedAt < this.#freshMs;
  }

  /** A claim asked for at `asked` (this worker's clock) was granted. */
  claimed(channelId: string, asked: number): void {
    this.#claims += 1;
    this.#claimedAs.set(channelId, this.#claims);
    this.#confirmedAt.set(channelId, asked);
  }

  /**
   * Renews every lease of `leases`. An answer that came after a third of a lease confirms them
   * only from when it was asked, so they may lapse before the next renewal is due (a channel
   * regained on it would have its replayed turn stopped at once): the renewal is asked for again
   * at once, `late` told of the first answer meanwhile, and the second answer is the one returned.
   */
  async renew(leases: WorkerLeases, late: (asked: number) => void): Promise<Renewal> {
    const first = await this.#renewOnce(leases);
    if (Date.now() - first.asked <= this.#freshMs) return first;
    late(first.asked);
    return this.#renewOnce(leases);
  }

  async #renewOnce(leases: WorkerLeases): Promise<Renewal> {
    const asked = Date.now();
    const mark = this.renewing();
    return { asked, mark, renewed: await leases.renew() };
  }

  /** A renewal is asked for now: its mark, for `renewed` and `claimedSince`. */
  renewing(): number {
    return this.#claims;
  }

  /**
   * The renewal asked for at `asked` and marked `mark` kept `kept`: those are confirmed at
   * `asked`; the others are not confirmed any more, unless claimed since it was asked for.
   */
  renewed(mark: number, kept: ReadonlySet<string>, asked: number): void {
    for (const channelId of this.#confirmedAt.keys()) {
      if (!this.claimedSince(mark, channelId)) this.#confirmedAt.delete(channelId);
    }
    for (const channelId of kept) this.#confirmedAt.set(channelId, asked);
  }

  /** Whether the channel's lease was granted after the renewal marked `mark` was asked for. */
  claimedSince(mark: number, channelId: string): boolean {
    return (this.#claimedAs.get(channelId) ?? 0) > mark;
  }

  /** The channel is not held here any more. */
  forget(channelId: string): void {
    this.#confirmedAt.delete(channelId);
    this.#claimedAs.delete(channelId);
  }

  clear(): void {
    this.#confirmedAt.clear();
    this.#claimedAs.clear();
  }
}
