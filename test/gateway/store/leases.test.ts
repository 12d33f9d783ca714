import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";
import { waitFor } from "../../helpers/wait-for.js";

let cluster: PostgresCluster;
const stores: PostgresGatewayStore[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await cluster?.destroy();
});

/** Two workers' stores on one fresh database. */
async function twoWorkers() {
  const url = await cluster.createDatabase();
  const a = await PostgresGatewayStore.open(url);
  const b = await PostgresGatewayStore.open(url);
  stores.push(a, b);
  return { url, a, b };
}

describe("channel leases in PostgreSQL", () => {
  it("gives a channel claimed by two workers at once to exactly one", async () => {
    const { a, b } = await twoWorkers();
    for (const channel of ["c1", "c2", "c3", "c4", "c5"]) {
      const leases = [a.channelLeases("worker-a", 15), b.channelLeases("worker-b", 15)];
      const won = await Promise.all(leases.map((lease) => lease.claim(channel)));
      expect(won.filter(Boolean)).toHaveLength(1);
      const winner = won[0] ? "worker-a" : "worker-b";
      expect(await leases[0]!.holder(channel)).toEqual({ owner: winner, live: true });
      // The holder renews by claiming again; the other still cannot.
      expect(await leases[won[0] ? 0 : 1]!.claim(channel)).toBe(true);
      expect(await leases[won[0] ? 1 : 0]!.claim(channel)).toBe(false);
    }
  });

  it("lets another worker take a channel once its lease expires, and the first sees it lost", async () => {
    const { a, b } = await twoWorkers();
    const first = a.channelLeases("worker-a", 1);
    const second = b.channelLeases("worker-b", 15);
    expect(await first.claim("moving")).toBe(true);
    expect(await first.claim("kept")).toBe(true);
    expect(await first.renew()).toEqual(["kept", "moving"]);
    expect(await second.claim("moving")).toBe(false);
    await waitFor(
      async () => (await second.holder("moving"))?.live === false,
      "the lease to expire",
    );
    expect(await second.claim("moving")).toBe(true);
    expect(await first.renew()).toEqual(["kept"]);
    await first.releaseAll();
    expect(await second.claim("kept")).toBe(true);
    expect(await first.renew()).toEqual([]);
  });

  it("takes orphaned channels with unanswered messages, and only those", async () => {
    const { a, b } = await twoWorkers();
    const dead = a.channelLeases("dead-worker", 1);
    const alive = a.channelLeases("alive-worker", 15);
    const sweeper = b.channelLeases("sweeper", 15);
    await a.insertUserMessage("orphan", "lost?", "http");
    const answered = await a.insertUserMessage("done", "hi", "http");
    await a.settle({
      messageIds: [answered.id],
      state: "answered",
      reply: { kind: "reply", text: "hello" },
    });
    await a.insertUserMessage("owned", "busy", "http");
    await a.insertUserMessage("unclaimed", "nobody took me", "http");
    expect(await dead.claim("orphan")).toBe(true);
    expect(await dead.claim("done")).toBe(true);
    expect(await alive.claim("owned")).toBe(true);
    await waitFor(
      async () => (await b.channelLeases("x", 1).holder("orphan"))?.live === false,
      "expiry",
    );
    const [first, second] = await Promise.all([
      sweeper.claimOrphans(),
      a.channelLeases("other-sweeper", 15).claimOrphans(),
    ]);
    expect([...(first ?? []), ...(second ?? [])].sort()).toEqual(["orphan", "unclaimed"]);
    expect(await sweeper.claimOrphans()).toEqual([]);
  });
});

describe("a worker's answers in PostgreSQL", () => {
  it("are refused for a channel another worker holds, so a lost channel is never answered twice", async () => {
    const { a, b } = await twoWorkers();
    a.fence("worker-a");
    b.fence("worker-b");
    const message = await a.insertUserMessage("taken", "who answers?", "http");
    const free = await a.insertUserMessage("free", "nobody holds me", "http");
    expect(await b.channelLeases("worker-b", 15).claim("taken")).toBe(true);
    const late = { state: "answered" as const, reply: { kind: "reply" as const, text: "stale" } };
    expect(await a.settle({ messageIds: [message.id], ...late })).toBeNull();
    expect((await a.getMessage(message.id))?.state).toBe("received");
    const reply = await b.settle({
      messageIds: [message.id],
      state: "answered",
      reply: { kind: "reply", text: "owner" },
    });
    expect(reply?.text).toBe("owner");
    expect(await a.settle({ messageIds: [free.id], ...late })).not.toBeNull();
  });

  it("claim each schedule firing for one worker, and only once it is due", async () => {
    const { a, b } = await twoWorkers();
    const due = new Date(Date.now() - 60_000).toISOString();
    const next = new Date(Date.now() + 60_000).toISOString();
    const schedule = await a.insertSchedule(
      { cron: "* * * * *", channelId: "c", prompt: "p" },
      due,
    );
    const claims = await Promise.all(
      [a, b, a, b].map((store) => store.claimFiring(schedule.id, due, next, new Date())),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect((await b.getSchedule(schedule.id))?.nextRunAt).toBe(next);
    // The next firing is not due yet: nobody may take it early.
    expect(await b.claimFiring(schedule.id, next, null, new Date())).toBe(false);
  });
});

describe("wake-ups through LISTEN/NOTIFY", () => {
  it("reach the named worker only, and again after the database restarts", async () => {
    const { a, b } = await twoWorkers();
    const woken: string[] = [];
    let reconnects = 0;
    const listener = await b.listenForWakeUps(
      "worker-b",
      (messageId) => woken.push(messageId),
      () => {
        reconnects += 1;
      },
    );
    try {
      await a.wake("worker-c", "not-for-b");
      await a.wake("worker-b", "m-1");
      await waitFor(() => woken.includes("m-1"), "the wake-up");
      expect(woken).toEqual(["m-1"]);

      await cluster.stop();
      await cluster.start();
      await waitFor(() => reconnects > 0, "the listener to reconnect", 30_000);
      await a.wake("worker-b", "m-2");
      await waitFor(() => woken.includes("m-2"), "the wake-up after the restart");
      expect(woken).toEqual(["m-1", "m-2"]);
    } finally {
      await listener.close();
    }
  });
});

describe("shared events", () => {
  it("reach every worker in order with global ids, a large one read back, and are pruned", async () => {
    const { a, b } = await twoWorkers();
    const heard: Array<{ id: number; text: unknown }> = [];
    const listener = await b.listenForEvents(
      (numbered) =>
        heard.push({ id: numbered.id, text: (numbered.event as { text?: unknown }).text }),
      () => {},
    );
    try {
      // Past NOTIFY's 8000-byte payload: announced by id only, read from the table.
      const large = "x".repeat(20_000);
      const ids = [
        await a.appendEvent({ type: "text_delta", text: "small", channelId: "one" }),
        await a.appendEvent({ type: "text_delta", text: large, channelId: "one" }),
        await b.appendEvent({ type: "text_delta", text: "other", channelId: "two" }),
        await a.appendEvent({ type: "text_delta", text: "last", channelId: "one" }),
      ];
      await waitFor(() => heard.length === 4, "four events");
      expect(heard).toEqual([
        { id: ids[0], text: "small" },
        { id: ids[1], text: large },
        { id: ids[2], text: "other" },
        { id: ids[3], text: "last" },
      ]);
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
      const after = await b.eventsAfter("one", ids[0], 10);
      expect(after.map((numbered) => numbered.id)).toEqual([ids[1], ids[3]]);
      expect((await b.eventsAfter("one", undefined, 1)).map((numbered) => numbered.id)).toEqual([
        ids[3],
      ]);
      expect(await a.pruneEvents(1)).toBe(0);
      expect(await a.pruneEvents(0)).toBe(4);
      expect(await b.eventsAfter("one", undefined, 10)).toEqual([]);
    } finally {
      await listener.close();
    }
  });
});
