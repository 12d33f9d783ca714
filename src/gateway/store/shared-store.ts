import type { GatewayEvent } from "../events.js";
import type { SharedPermissions } from "./shared-permissions.js";
import type { GatewayStore } from "./store.js";
import type { StoreHealth } from "./store-health.js";

/** A channel event as every worker numbers it: `id` is global and ascends per channel. */
export interface SharedEvent {
  id: number;
  event: GatewayEvent;
}

/** One worker's leases on the channels it drives (see postgres/channel-leases.ts). */
/** `wake`'s owner for a message of a channel nobody drives: every worker is woken. */
export const ANY_WORKER = "*";

export interface WorkerLeases {
  readonly worker: string;
  readonly seconds: number;
  /** Takes (or renews) the channel unless another worker holds it unexpired. */
  claim(channelId: string): Promise<boolean>;
  /** Takes the channels with unanswered messages and no live owner; returns them. */
  claimOrphans(): Promise<string[]>;
  /** Extends this worker's leases; returns the channels it still holds. */
  renew(): Promise<string[]>;
  holder(channelId: string): Promise<{ owner: string; live: boolean } | null>;
  /** Gives up the channel's lease if this worker holds it. */
  release(channelId: string): Promise<void>;
  releaseAll(): Promise<void>;
}

/** A store several workers share: leases, and wake-ups of a channel's owner. */
export interface SharedStore extends GatewayStore {
  /**
   * Whether the database can be reached now. While it cannot, every method rejects with a
   * `StoreUnavailableError` saying so (the API's 503).
   */
  readonly health: StoreHealth;
  /**
   * From now on this store writes answers as `worker`: `settle` answers nothing (resolves to
   * null) for a channel whose lease another worker holds, so a worker that lost a channel never
   * answers for it again.
   */
  fence(worker: string): void;
  channelLeases(worker: string, seconds: number): WorkerLeases;
  /**
   * Claims one firing of a schedule for this worker: moves the schedule from `dueAt` (the
   * firing, which must be due by `now`) to `nextRunAt`. Of workers firing it together, one
   * gets true; the others skip that firing.
   */
  claimFiring(
    scheduleId: string,
    dueAt: string,
    nextRunAt: string | null,
    now: Date,
  ): Promise<boolean>;
  /**
   * Tells `owner` that a message of a channel it drives was stored by another worker; with
   * `ANY_WORKER`, tells every worker (the first to claim the channel routes it).
   */
  wake(owner: string, messageId: string): Promise<void>;
  /**
   * Calls `onWake` with each message id another worker stored for this one; `onReconnect`
   * after the listening connection was lost and made again (wake-ups may have been missed).
   */
  listenForWakeUps(
    worker: string,
    onWake: (messageId: string) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }>;
  /** Stores a channel event for every worker to stream; returns its id. */
  appendEvent(event: GatewayEvent): Promise<number>;
  /** Stores events of one channel, in order, at once; returns their ids. */
  appendEvents(events: GatewayEvent[]): Promise<number[]>;
  /** A channel's stored events after `after` (its newest `limit` when undefined), oldest first. */
  eventsAfter(channelId: string, after: number | undefined, limit: number): Promise<SharedEvent[]>;
  /** This database's name for its event stream in SSE ids (the same on every worker). */
  eventStreamName(): Promise<string>;
  /** Every channel's stored events after the global id `after`, oldest first, at most `limit`. */
  eventsSince(after: number, limit: number): Promise<SharedEvent[]>;
  /**
   * Calls `onEvent` with each event any worker stores, in order; `onReconnect` after the
   * listening connection was lost and made again (read what was missed with `eventsAfter`).
   */
  listenForEvents(
    onEvent: (event: SharedEvent) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }>;
  /** The permission requests of every worker's agents (answered through any worker). */
  permissionLedger(): SharedPermissions;
  /**
   * Records that the page-link code `nonce` (valid until `expiresAt`) was traded for the token:
   * true the first time through any worker, false after (see link-codes.ts).
   */
  spendLinkCode(nonce: string, expiresAt: Date): Promise<boolean>;
  /** Tells every worker (this one too) that a schedule was created, changed or deleted. */
  announceSchedule(scheduleId: string): Promise<void>;
  /**
   * Calls `onChange` with each schedule id any worker announces; `onReconnect` after the
   * listening connection was lost and made again (read every schedule: changes were missed).
   */
  listenForSchedules(
    onChange: (scheduleId: string) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }>;
}

export function isSharedStore(store: GatewayStore): store is SharedStore {
  return "channelLeases" in store;
}
