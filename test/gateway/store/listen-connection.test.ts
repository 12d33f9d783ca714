/**
 * A worker's NOTIFY traffic on PostgreSQL: one LISTEN connection for all its channels (events,
 * wake-ups, schedules, permission answers), made again after it is lost with every listener
 * told; and an append of several channels' events announced by one notification that another
 * worker reads in order, a too large one by one notification per event.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayEvent } from "../../../src/gateway/events.js";
import { EVENTS_CHANNEL } from "../../../src/gateway/store/postgres/lone-writes.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import type { SharedEvent } from "../../../src/gateway/store/shared-store.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";
import { waitFor } from "../../helpers/wait-for.js";

let cluster: PostgresCluster;
const stores: PostgresGatewayStore[] = [];
const clients: pg.Client[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.end()));
  await Promise.all(stores.map((store) => store.close()));
  await cluster?.destroy();
});

async function open(url: string): Promise<PostgresGatewayStore> {
  const store = await PostgresGatewayStore.open(url);
  stores.push(store);
  return store;
}

/** A connection of the test's own, to look at the server from outside the stores. */
async function observer(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  // The last test stops the server under it.
  client.on("error", () => {});
  await client.connect();
  clients.push(client);
  return client;
}

/** The backends of this database that last ran a LISTEN (the stores' listening connections). */
async function listening(client: pg.Client): Promise<number[]> {
  const { rows } = await client.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`,
  );
  return rows.map((row) => row.pid);
}

const delta = (channelId: string, text: string): GatewayEvent => ({
  type: "text_delta",
  text,
  channelId,
});
const textOf = (numbered: SharedEvent) => (numbered.event as { text: string }).text;

describe("a worker's LISTEN connection", () => {
  it("is one for events, wake-ups, schedules and permission answers, made again with all of them when lost", async () => {
    const url = await cluster.createDatabase();
    const [a, b, look] = [await open(url), await open(url), await observer(url)];
    const heard: string[] = [];
    const reconnected: string[] = [];
    const feeds = [
      await b.listenForEvents(
        (numbered) => heard.push(`event ${textOf(numbered)}`),
        () => reconnected.push("events"),
      ),
      await b.listenForWakeUps(
        "worker-b",
        (messageId) => heard.push(`wake ${messageId}`),
        () => reconnected.push("wake-ups"),
      ),
      await b.listenForSchedules(
        (scheduleId) => heard.push(`schedule ${scheduleId}`),
        () => reconnected.push("schedules"),
      ),
      await b.permissionLedger().listen(
        "worker-b",
        (requestId) => heard.push(`permission ${requestId}`),
        () => reconnected.push("permissions"),
      ),
    ];
    try {
      const pids = await listening(look);
      expect(pids).toHaveLength(1);
      const everything = async (round: number, total = 4 * round) => {
        await a.appendEvent(delta("c", `e${round}`));
        await a.wake("worker-b", `m${round}`);
        await a.announceSchedule(`s${round}`);
        await look.query("SELECT pg_notify('rudder_permissions', $1)", [
          JSON.stringify({ to: "worker-b", id: `p${round}` }),
        ]);
        await waitFor(() => heard.length === total, `round ${round} heard`);
      };
      await everything(1);
      // Each in its order; the channels' among them are not (an event may be read back first).
      expect(heard.sort()).toEqual(["event e1", "permission p1", "schedule s1", "wake m1"]);

      await look.query("SELECT pg_terminate_backend($1)", [pids[0]]);
      await waitFor(() => reconnected.length === 4, "every listener told of the reconnection");
      expect(reconnected.sort()).toEqual(["events", "permissions", "schedules", "wake-ups"]);
      expect(await listening(look)).toHaveLength(1);
      await everything(2);
      expect(heard.slice(4).sort()).toEqual([
        "event e2",
        "permission p2",
        "schedule s2",
        "wake m2",
      ]);

      // A listener that stops hears nothing more; the others go on, on the same connection.
      await feeds[1]!.close();
      await a.wake("worker-b", "m3");
      await everything(3, 11);
      expect(heard.slice(8).sort()).toEqual(["event e3", "permission p3", "schedule s3"]);
    } finally {
      for (const feed of feeds) await feed.close();
    }
    // The last listener gone, so is the connection.
    await waitFor(async () => (await listening(look)).length === 0, "the connection closed");
  });
});

describe("an append's announcement", () => {
  it("is one notification for events of several channels, read in order by another worker", async () => {
    const url = await cluster.createDatabase();
    const [a, b, look] = [await open(url), await open(url), await observer(url)];
    const notifications: string[] = [];
    look.on("notification", (notification) => notifications.push(notification.payload ?? ""));
    await look.query(`LISTEN ${EVENTS_CHANNEL}`);
    const heard: SharedEvent[] = [];
    const feed = await b.listenForEvents(
      (numbered) => heard.push(numbered),
      () => {},
    );
    try {
      const batch = [
        delta("one", "a"),
        delta("two", "b"),
        delta("one", "c"),
        delta("three", "d"),
        delta("two", "e"),
      ];
      const ids = await a.appendEvents(batch);
      await waitFor(() => heard.length === 5, "the batch");
      expect(heard).toEqual(ids.map((id, index) => ({ id, event: batch[index] })));
      // Notifications arrive in order: once the next append's is in, the batch's all are.
      const counted = async () => {
        const mark = `mark ${notifications.length}`;
        await a.appendEvent(delta("marks", mark));
        await waitFor(() => notifications.at(-1)?.includes(mark), "the mark's notification");
        return notifications.length - 1;
      };
      expect(await counted()).toBe(1);

      // Too large together for one notification (8000 bytes), each small enough alone, and
      // one too large even alone: one notification each, the large one read back.
      const big = (channelId: string, letter: string) => delta(channelId, letter.repeat(3000));
      const large = [
        big("one", "f"),
        big("two", "g"),
        big("one", "h"),
        delta("two", "i".repeat(9000)),
      ];
      const moreIds = await a.appendEvents(large);
      await waitFor(() => heard.length === 10, "the large batch");
      const heardLarge = heard.filter((numbered) => numbered.event.channelId !== "marks").slice(5);
      expect(heardLarge).toEqual(moreIds.map((id, index) => ({ id, event: large[index] })));
      expect(await counted()).toBe(2 + 4);
      // Every channel's events in order, as stored.
      for (const channelId of ["one", "two", "three"]) {
        const stored = await b.eventsAfter(channelId, undefined, 100);
        expect(heard.filter((numbered) => numbered.event.channelId === channelId)).toEqual(stored);
      }
    } finally {
      await feed.close();
    }
  });
});

describe("a listener added around an outage", () => {
  it("is refused while the database is away, and once it is back shares the one connection, the earlier listeners told", async () => {
    const url = await cluster.createDatabase();
    const [a, b] = [await open(url), await open(url)];
    const heard: string[] = [];
    const reconnected: string[] = [];
    const feeds = [
      await b.listenForEvents(
        (numbered) => heard.push(`event ${textOf(numbered)}`),
        () => reconnected.push("events"),
      ),
      await b.listenForSchedules(
        (scheduleId) => heard.push(`schedule ${scheduleId}`),
        () => reconnected.push("schedules"),
      ),
    ];
    try {
      await cluster.stop();
      const wake = (messageId: string) => heard.push(`wake ${messageId}`);
      await expect(b.listenForWakeUps("worker-b", wake, () => {})).rejects.toThrow();
      await cluster.start();
      // At once, whether or not the lost connection's retry came first.
      feeds.push(await b.listenForWakeUps("worker-b", wake, () => reconnected.push("wake-ups")));
      await waitFor(() => reconnected.length === 2, "the earlier listeners told", 30_000);
      expect(reconnected.sort()).toEqual(["events", "schedules"]);
      expect(await listening(await observer(url))).toHaveLength(1);
      await a.appendEvent(delta("c", "after"));
      await a.wake("worker-b", "m-after");
      await a.announceSchedule("s-after");
      await waitFor(() => heard.length === 3, "all three heard");
      expect(heard.sort()).toEqual(["event after", "schedule s-after", "wake m-after"]);
    } finally {
      for (const feed of feeds) await feed.close();
    }
  }, 60_000);
});
