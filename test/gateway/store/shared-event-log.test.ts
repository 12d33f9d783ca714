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
import { type PostgresCluster, startPostgresCluster } from "../../fixtures/postgres-cluster.js";
import { waitFor } from "../helpers.js";

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
