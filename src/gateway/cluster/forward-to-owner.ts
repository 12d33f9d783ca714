/**
 * A message that arrives on a worker which does not drive its channel: stored for the worker
 * that does, and that worker woken (`LISTEN/NOTIFY`); the client is told `steered` when the owner
 * steered its running turn with it (its announcement seen in the shared events), else
 * `forwarded`.
 */
import type { MessageAttachment } from "../events.js";
import type { Delivery } from "../routing/router.js";
import { ANY_WORKER, type SharedStore, type WorkerLeases } from "../store/shared-store.js";
import type { DeliveryClaim } from "../store/source-store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";
import type { ForwardWatch } from "./forwarded-outcome.js";

/** The message as the sources deliver it (see `ChannelOwnership.deliver`). */
export interface ForwardedMessage {
  channelId: string;
  text: string;
  source: string;
  /** Called once the message is stored (as the router's). */
  stored?: () => void;
  attachments?: readonly MessageAttachment[];
  claim?: DeliveryClaim;
}

/** What forwarding needs of the worker it runs on. */
export interface ForwardingWorker {
  store: SharedStore;
  leases: WorkerLeases;
  /** This worker's name in leases and wake-ups. */
  worker: string;
  /** Whether this worker is shutting down (asked after the message is stored). */
  leaving: () => boolean;
  /** The owner's lease ran out meanwhile: the channel is taken now rather than at the next sweep. */
  sweepNow: () => void;
  /**
   * Watches the channel for what its owner does with the message: opened before the message
   * is stored, so that no announcement comes too early to be seen.
   */
  watch?: ((channelId: string) => ForwardWatch) | undefined;
  /** Routes a message stored here whose channel's live lease is this worker's own after all. */
  routeHere: (messageId: string) => Promise<void>;
}

/**
 * Stores the message and wakes its channel's owner. While this worker shuts down, a channel
 * nobody drives is offered to every worker (the first to claim it routes it), and one this
 * worker holds goes with its leases. A store that goes out of reach after the message is stored
 * still answers `forwarded`: the owner routes it when the store is back (its revalidation).
 */
export async function forwardToOwner(
  message: ForwardedMessage,
  forwarding: ForwardingWorker,
): Promise<Delivery> {
  const watch = forwarding.watch?.(message.channelId);
  try {
    return await storeAndWake(message, forwarding, watch);
  } finally {
    watch?.close();
  }
}

async function storeAndWake(
  message: ForwardedMessage,
  { store, leases, worker, leaving, sweepNow }: ForwardingWorker,
  watch: ForwardWatch | undefined,
): Promise<Delivery> {
  const { channelId, text, source, stored, attachments, claim } = message;
  const inserted = await store.insertUserMessage(
    channelId,
    text,
    source,
    undefined,
    attachments,
    claim,
  );
  stored?.();
  const forwarded: Delivery = { id: inserted.id, disposition: "forwarded" };
  let holder: { owner: string; live: boolean } | null;
  try {
    holder = await leases.holder(channelId);
    if (holder?.live && holder.owner !== worker) {
      await store.wake(holder.owner, inserted.id);
    } else if (!holder?.live && leaving()) {
      // Nobody drives it and this worker is shutting down: the first other worker to claim it.
      await store.wake(ANY_WORKER, inserted.id);
    }
  } catch (error) {
    // Stored, so accepted: the owner routes it when it is back from the outage (revalidate).
    if (isStoreUnavailable(error)) return forwarded;
    throw error;
  }
  // Held here by a worker shutting down: the channel goes when its leases are released.
  if (holder?.owner === worker) return forwarded;
  if (!holder?.live) {
    sweepNow();
    return forwarded;
  }
  // The owner steers its running turn with it: say so, as a single worker would.
  const steered = (await watch?.steered(inserted.id)) ?? false;
  return { id: inserted.id, disposition: steered ? "steered" : "forwarded" };
}

/**
 * Wakes the owner of a channel for a message stored here that this worker did not route (the
 * channel left it between its claim and the routing, and its new owner may have listed the
 * channel's messages before this one was stored): another worker; this one, whose lease it is
 * after all (`routeHere`); or, when no lease is live, the sweep takes the channel now. A store
 * out of reach leaves it to the owner's revalidation when it is back.
 */
export async function wakeOwner(
  channelId: string,
  messageId: string,
  { store, leases, worker, sweepNow, routeHere }: ForwardingWorker,
): Promise<void> {
  try {
    const holder = await leases.holder(channelId);
    if (!holder?.live) sweepNow();
    else if (holder.owner !== worker) await store.wake(holder.owner, messageId);
    else await routeHere(messageId);
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
  }
}
