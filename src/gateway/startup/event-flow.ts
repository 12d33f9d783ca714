/**
 * The second step of `startGateway`: the event bus, the writes that wait out an outage of a
 * store with a health (PostgreSQL, SQLite), and on a shared store the feed that streams every
 * worker's events here. A failure of the feed
 * closes the store.
 */
import { EventBus } from "../event-bus.js";
import { type PatientWrites, patientWrites } from "../store/patient-writes.js";
import type { SharedStore } from "../store/shared-store.js";
import type { GatewayStore } from "../store/store.js";
import type { GatewayStorage } from "./open-storage.js";

export interface EventFlow {
  bus: EventBus;
  /** Aborted at shutdown, once held writes had their wait: they give up then. */
  holding: AbortController;
  patient: PatientWrites<GatewayStore> | undefined;
  eventFeed: { close(): Promise<void> } | undefined;
}

/** `holds(channelId)`: whether this worker drives the channel (always, without ownership). */
export async function startEventFlow(
  { store, shared, sharedName }: GatewayStorage,
  holds: (channelId: string) => boolean,
  log: (line: string) => void,
): Promise<EventFlow> {
  // A turn that ends while the store cannot be written (the database away, SQLite's disk full
  // or file locked) keeps its answer (and the events before it) until it can, or until a
  // shutdown has waited for it long enough.
  const holding = new AbortController();
  const health = store.health;
  const patient = health ? patientWrites(store, health, holding.signal, holds) : undefined;
  const bus = new EventBus(
    shared && patient
      ? {
          shared: {
            // The patient wrapper of `shared` itself, so a shared store's methods.
            append: (events) => (patient.store as SharedStore).appendEvents(events),
            after: (channelId, after, limit) => shared.eventsAfter(channelId, after, limit),
            since: (after, limit) => shared.eventsSince(after, limit),
          },
          ...(sharedName ? { sharedName } : {}),
          logger: log,
        }
      : {},
  );
  // Every worker streams every channel's events, whichever worker publishes them.
  const eventFeed = await shared
    ?.listenForEvents(
      (numbered) => bus.deliver(numbered),
      () => void bus.catchUp(),
    )
    .catch(async (error: unknown) => {
      await store.close();
      throw error;
    });
  return { bus, holding, patient, eventFeed };
}
