import type { GatewayStore, MessageRecord } from "./store/store.js";

/** What an earlier run left in the store for this gateway to take up at its start. */
export interface LeftoverWork {
  /** Unanswered messages delivered `maxAttempts` times already: given up, not replayed. */
  gaveUp: MessageRecord[];
  /** Unanswered messages to dispatch again, in order. */
  replay: MessageRecord[];
  /** Channels with deferred messages, and when to retry each (the latest reset among them). */
  retryAt: Map<string, number>;
}

/**
 * Reads the work left in the store, keeping only channels this gateway may drive: with
 * `claimChannel` (several workers), a channel it claims, each channel claimed once.
 */
export async function leftoverWork(
  store: GatewayStore,
  maxAttempts: number,
  claimChannel?: (channelId: string) => Promise<boolean>,
): Promise<LeftoverWork> {
  const claims = new Map<string, Promise<boolean>>();
  const mayDrive = (channelId: string) => {
    if (claimChannel === undefined) return Promise.resolve(true);
    let claimed = claims.get(channelId);
    if (claimed === undefined) {
      claimed = claimChannel(channelId);
      claims.set(channelId, claimed);
    }
    return claimed;
  };
  const work: LeftoverWork = { gaveUp: [], replay: [], retryAt: new Map() };
  for (const message of await store.listUnanswered()) {
    if (!(await mayDrive(message.channelId))) continue;
    (message.attempts >= maxAttempts ? work.gaveUp : work.replay).push(message);
  }
  for (const message of await store.listDeferred()) {
    if (!(await mayDrive(message.channelId))) continue;
    const at = message.retryAt ? Date.parse(message.retryAt) : Date.now();
    work.retryAt.set(message.channelId, Math.max(work.retryAt.get(message.channelId) ?? 0, at));
  }
  return work;
}
