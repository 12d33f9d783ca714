/**
 * The event bus over PostgreSQL's shared log. With more channels than it keeps logs for, a
 * channel's log dropped from memory while its events are still being appended must not let a
 * later event of that channel be appended beside them, out of order. And its SSE ids are named
 * after the database, so an id kept from one database means nothing to another's workers.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { EventBus } from "../../../src/gateway/event-bus.js";
import type { GatewayEvent } from "../../../src/gateway/events.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";
import { waitFor } from "../../helpers/wait-for.js";

let cluster: PostgresCluster;
let store: PostgresGatewayStore | undefined;
const others: PostgresGatewayStore[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  await Promise.all(others.map((other) => other.close()));
  await store?.close();
  await cluster?.destroy();
});

it("appends each channel's events in the order published, past the cap of kept logs", async () => {
  store = await PostgresGatewayStore.open(await cluster.createDatabase());
  const shared = store;
  const bus = new EventBus({
    maxChannels: 2,
    shared: {
      append: (events) => shared.appendEvents(events),
      after: (channelId, after, limit) => shared.eventsAfter(channelId, after, limit),
      since: (after, limit) => shared.eventsSince(after, limit),
    },
  });
  const feed = await shared.listenForEvents(
    (numbered) => bus.deliver(numbered),
    () => {},
  );
  try {
    const channels = Array.from({ length: 12 }, (_, index) => `c${index}`);
    const rounds = 30;
    for (let round = 0; round < rounds; round += 1) {
      for (const channelId of channels) {
        const event: GatewayEvent = { type: "context_usage", usage: null, channelId };
        bus.publish({ ...event, round } as GatewayEvent);
      }
      // Let appends run and deliveries come back (which drop idle logs past the cap).
      await new Promise((resolve) => setImmediate(resolve));
    }
    const stored = async (channelId: string) =>
      (await shared.eventsAfter(channelId, 0, 1000)).map(
        (numbered) => (numbered.event as GatewayEvent & { round: number }).round,
      );
    await waitFor(
      async () => (await Promise.all(channels.map(stored))).every((r) => r.length === rounds),
      "every event stored",
      30_000,
    );
    const inOrder = Array.from({ length: rounds }, (_, round) => round);
    for (const channelId of channels) expect(await stored(channelId)).toEqual(inOrder);
  } finally {
    await feed.close();
  }
}, 60_000);

it("names the SSE ids after the database: alike on its workers, unlike another database's", async () => {
  const first = await cluster.createDatabase();
  const [a, b, elsewhere] = await Promise.all([
    PostgresGatewayStore.open(first),
    PostgresGatewayStore.open(first),
    PostgresGatewayStore.open(await cluster.createDatabase()),
  ]);
  others.push(a!, b!, elsewhere!);
  const [nameA, nameB, nameElsewhere] = await Promise.all(
    [a!, b!, elsewhere!].map((each) => each.eventStreamName()),
  );
  expect(nameA).toMatch(/^shared[0-9a-f]{8}$/);
  expect(nameB).toBe(nameA);
  expect(nameElsewhere).toMatch(/^shared[0-9a-f]{8}$/);
  expect(nameElsewhere).not.toBe(nameA);
  expect(await a!.eventStreamName()).toBe(nameA);
});

it("stores one append's events of several channels in order, two workers at once without waiting on each other", async () => {
  const url = await cluster.createDatabase();
  const [one, two] = await Promise.all([
    PostgresGatewayStore.open(url),
    PostgresGatewayStore.open(url),
  ]);
  others.push(one, two);
  const event = (channelId: string, text: string): GatewayEvent => ({
    type: "text_delta",
    text,
    channelId,
  });
  // Each worker's batches name the channels in another order: locks taken as listed could
  // deadlock; taken in key order they cannot.
  // Each worker appends one batch after another, as its bus does; the two run at once.
  const worker = async (store: PostgresGatewayStore, name: string, order: string[]) => {
    const batches: number[][] = [];
    for (let round = 0; round < 20; round += 1) {
      batches.push(
        await store.appendEvents(order.map((channelId) => event(channelId, `${name} ${round}`))),
      );
    }
    return batches;
  };
  const ids = (
    await Promise.all([worker(one, "one", ["a", "b", "c"]), worker(two, "two", ["c", "b", "a"])])
  ).flat();
  for (const batch of ids) expect(batch).toHaveLength(3);
  for (const channelId of ["a", "b", "c"]) {
    const stored = await one.eventsAfter(channelId, undefined, 1000);
    expect(stored).toHaveLength(40);
    const texts = (worker: string) =>
      stored
        .map((numbered) => (numbered.event as { text: string }).text)
        .filter((text) => text.startsWith(worker));
    // Each worker's events of the channel in the order it appended them.
    expect(texts("one")).toEqual(Array.from({ length: 20 }, (_, round) => `one ${round}`));
    expect(texts("two")).toEqual(Array.from({ length: 20 }, (_, round) => `two ${round}`));
  }
});
