import type { GatewayStore, MessageRecord } from "../store/store.js";

/**
 * When an unanswered message is given up on at start instead of replayed, so that a message
 * that takes the gateway down each time it is handled cannot loop forever under a supervisor.
 * Each gateway run counts a message at most once in each (a steer dispatched again, a retry,
 * adds nothing): `attempts`, runs in which its agent started on it (the agent, or the gateway
 * with it, died before answering); `deliveries`, runs that handed it to an agent at all, so a
 * message that kills the gateway before the agent shows it read anything is capped too. That
 * cap is higher because a gateway killed again and again for other reasons (a crash loop, a
 * host under load) hands messages over that its agents, still starting, never read.
 */
export interface DeliveryCaps {
  /** Default 5. */
  maxAttempts: number;
  /** Default 20. */
  maxDeliveries: number;
}

export const defaultDeliveryCaps: DeliveryCaps = { maxAttempts: 5, maxDeliveries: 20 };

/** Whether `message` has reached a cap, and the text its user is shown then. */
export function giveUpText(message: MessageRecord, caps: DeliveryCaps): string | null {
  if (message.attempts >= caps.maxAttempts) {
    return `Gave up on this message after ${message.attempts} deliveries without an answer: its agent started on it each time, and it or the gateway died before answering.`;
  }
  if (message.deliveries >= caps.maxDeliveries) {
    return `Gave up on this message after ${message.deliveries} deliveries without an answer: the gateway died each time, mostly before its agent had started on it.`;
  }
  return null;
}

/** What an earlier run left in the store for this gateway to take up at its start. */
export interface LeftoverWork {
  /** Unanswered messages at a cap of `DeliveryCaps`, with the text shown: not replayed. */
  gaveUp: { message: MessageRecord; text: string }[];
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
  caps: DeliveryCaps,
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
    const text = giveUpText(message, caps);
    if (text === null) work.replay.push(message);
    else work.gaveUp.push({ message, text });
  }
  for (const message of await store.listDeferred()) {
    if (!(await mayDrive(message.channelId))) continue;
    const at = message.retryAt ? Date.parse(message.retryAt) : Date.now();
    work.retryAt.set(message.channelId, Math.max(work.retryAt.get(message.channelId) ?? 0, at));
  }
  return work;
}
