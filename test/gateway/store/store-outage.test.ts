/**
 * The PostgreSQL store when its database goes away: statements fail at once with the one line
 * the API answers, the health says so and comes back by itself, and a listening connection that
 * missed notifications reads back what every channel got meanwhile, not only the listened ones.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventBus } from "../../../src/gateway/event-bus.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { StoreUnavailableError } from "../../../src/gateway/store/store-unavailable-error.js";
import { type LoopbackProxy, startLoopbackProxy } from "../../helpers/loopback-proxy.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";
import { waitFor } from "../../helpers/wait-for.js";

let cluster: PostgresCluster;
let proxy: LoopbackProxy;
const stores: PostgresGatewayStore[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
  proxy = await startLoopbackProxy(cluster.port);
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await proxy?.close();
  await cluster?.destroy();
});

/** A store reaching the database directly, and one reaching it through the proxy. */
async function twoStores() {
  const url = await cluster.createDatabase();
  const lines: string[] = [];
  const direct = await PostgresGatewayStore.open(url);
  const cutOff = await PostgresGatewayStore.open(
    url.replace(`:${cluster.port}/`, `:${proxy.port}/`),
    { logger: (line) => lines.push(line) },
  );
  stores.push(direct, cutOff);
  return { direct, cutOff, lines };
}

describe("a PostgreSQL store whose database goes away", () => {
  it("fails each statement at once with the reason, and is healthy again by itself", async () => {
    const { cutOff, lines } = await twoStores();
    await cutOff.insertUserMessage("c", "before", "http");
    expect(cutOff.health.status()).toEqual({ ok: true });
    await proxy.cut();
    try {
      const started = Date.now();
      const failures = await Promise.all(
        [cutOff.listChannels(), cutOff.insertUserMessage("c", "during", "http")].map((work) =>
          work.then(
            () => null,
            (error: unknown) => error,
          ),
        ),
      );
      expect(Date.now() - started).toBeLessThan(5000);
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(StoreUnavailableError);
        expect((failure as Error).message).toMatch(
          /^store unavailable: connection (refused|lost) to postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+; retrying$/,
        );
      }
      expect(cutOff.health.status()).toMatchObject({ ok: false });
    } finally {
      await proxy.restore();
    }
    // No statement needed: the health probes until the database answers.
    await waitFor(() => cutOff.health.up, "the store to be back", 30_000);
    expect((await cutOff.listMessages("c")).map((message) => message.text)).toEqual(["before"]);
    expect(lines.filter((line) => line.includes("store unavailable"))).toHaveLength(1);
    expect(lines.filter((line) => line.includes("store back"))).toHaveLength(1);
  });

  it("reads back, after its listening connection returns, what every channel got meanwhile", async () => {
    const { direct, cutOff } = await twoStores();
    const bus = new EventBus({
      shared: {
        append: (events) => cutOff.appendEvents(events),
        after: (channelId, after, limit) => cutOff.eventsAfter(channelId, after, limit),
        since: (after, limit) => cutOff.eventsSince(after, limit),
      },
    });
    let reconnects = 0;
    const listener = await cutOff.listenForEvents(
      (numbered) => bus.deliver(numbered),
      () => {
        reconnects += 1;
        void bus.catchUp();
      },
    );
    try {
      // A channel nobody streams (no listener) and one that someone does.
      const unwatched = await direct.appendEvent({ type: "text_delta", text: "1", channelId: "u" });
      const heard: number[] = [];
      bus.listen("w", (numbered) => heard.push(numbered.id));
      await waitFor(() => bus.replay("u").length === 1, "the first event");
      expect(bus.replay("u")[0]?.id).toBe(unwatched);

      await proxy.cut();
      const missed = [
        await direct.appendEvent({ type: "text_delta", text: "2", channelId: "u" }),
        await direct.appendEvent({ type: "text_delta", text: "3", channelId: "w" }),
        await direct.appendEvent({ type: "text_delta", text: "4", channelId: "new" }),
      ];
      await proxy.restore();
      await waitFor(() => reconnects > 0, "the listening connection to return", 30_000);
      await waitFor(
        () => bus.replay("u").length === 2 && heard.length === 1 && bus.replay("new").length === 1,
        "every channel's missed events",
      );
      expect(bus.replay("u").map((numbered) => numbered.id)).toEqual([unwatched, missed[0]]);
      expect(heard).toEqual([missed[1]]);
      expect(bus.replay("new").map((numbered) => numbered.id)).toEqual([missed[2]]);
    } finally {
      await listener.close();
    }
  });
});
