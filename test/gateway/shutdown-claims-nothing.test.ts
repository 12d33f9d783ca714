import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresGatewayStore } from "../../src/gateway/store/postgres/postgres-store.js";
import { startInProcessWorker } from "../helpers/in-process-worker.js";
import { postgresForFile } from "../helpers/postgres-for-file.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

const postgres = postgresForFile();
const { cleanups } = postgres;

/** Worker A: what `startGateway` assembles on a shared store, without its HTTP server. */
async function partsOfWorker(url: string) {
  const store = await PostgresGatewayStore.open(url);
  const { router, ownership, close } = await startInProcessWorker({
    store,
    closes: store,
    worker: "closing",
    leaseSeconds: 1,
  });
  cleanups.push(close);
  return { router, ownership };
}

describe("a worker shutting down", () => {
  it("claims no channel: what it is given is stored and answered by another worker", async () => {
    const url = await postgres.cluster.createDatabase();
    const a = await partsOfWorker(url);
    const lines: string[] = [];
    const b: TestGateway = await startTestGateway({
      prefix: "shutdown-claims-nothing",
      store: { kind: "postgres", url },
      workerName: "staying",
      // Its sweep for channels nobody drives comes every 10 s: what it answers sooner, it was
      // woken for.
      leaseSeconds: 30,
      logger: (line) => lines.push(line),
    });
    cleanups.push(() => b.cleanup());
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    const leaseOwner = async (channelId: string) =>
      (
        await client.query<{ owner: string }>("SELECT owner FROM leases WHERE channel_id = $1", [
          channelId,
        ])
      ).rows[0]?.owner ?? null;
    const answered = (channelId: string, id: string) =>
      waitFor(
        async () => (await b.messages(channelId)).find((message) => message.replyTo === id),
        `the answer to ${id} through the other worker`,
      );

    // A delivery whose claim is on its way to the database as the shutdown begins.
    const racing = a.ownership.deliver("racing", "sent as SIGTERM came", "http");
    a.ownership.quiesce();
    await a.router.close();
    const raced = await racing;
    expect(raced.disposition).toBe("forwarded");
    expect(await leaseOwner("racing")).not.toBe("closing");

    // One that comes later still, while the worker waits for what it holds.
    const later = await a.ownership.deliver("later", "sent while it waits", "http");
    expect(later.disposition).toBe("forwarded");
    expect(await leaseOwner("later")).not.toBe("closing");

    for (const [channelId, delivery] of [
      ["racing", raced],
      ["later", later],
    ] as const) {
      const answer = await answered(channelId, delivery.id);
      expect(answer.kind).toBe("reply");
      expect(await leaseOwner(channelId)).toBe("staying");
      const replies = (await b.messages(channelId)).filter((m) => m.replyTo === delivery.id);
      expect(replies).toHaveLength(1);
    }
    // Woken at once, not found by a sweep.
    expect(lines.filter((line) => line.includes("took over channel"))).toEqual([]);
  }, 60_000);

  it("hands over what it left unanswered with the channel, to a worker a new message reaches", async () => {
    const url = await postgres.cluster.createDatabase();
    const shared = { store: { kind: "postgres" as const, url }, leaseSeconds: 30 };
    const a = await startTestGateway({
      prefix: "handover-a",
      scenario: "hold",
      workerName: "a",
      ...shared,
    });
    cleanups.push(() => a.cleanup());
    const b = await startTestGateway({ prefix: "handover-b", workerName: "b", ...shared });
    cleanups.push(() => b.cleanup());
    const first = await a.api<{ id: string }>("POST", "/api/channels/x/messages", {
      text: "first",
    });
    expect(first.status).toBe(202);
    await waitFor(
      async () =>
        (await a.api<{ runners: Array<{ inflight: boolean }> }>("GET", "/api/runners")).body.runners
          .length > 0,
      "the first turn running on a",
    );
    // SIGTERM: the turn is stopped, its message left unanswered, the lease released.
    await a.close();
    // The channel's next message reaches b before b's sweep (every 10 s) would find the first.
    const second = await b.api<{ id: string }>("POST", "/api/channels/x/messages", {
      text: "second",
    });
    expect(second.status).toBe(202);
    await waitFor(async () => {
      const states = (await b.messages("x")).filter((m) => m.role === "user").map((m) => m.state);
      return states.length === 2 && states.every((state) => state === "answered");
    }, "both messages answered by b");
    const messages = await b.messages("x");
    for (const id of [first.body.id, second.body.id]) {
      expect(messages.filter((m) => m.replyTo === id).length).toBeLessThanOrEqual(1);
    }
    expect(messages.filter((m) => m.replyTo === first.body.id)).toHaveLength(1);
  }, 60_000);

  it("hands its channels over at once: the others are woken for what it left unanswered", async () => {
    const url = await postgres.cluster.createDatabase();
    const shared = { store: { kind: "postgres" as const, url }, leaseSeconds: 30 };
    const a = await startTestGateway({
      prefix: "handover-a",
      scenario: "hold",
      workerName: "a",
      ...shared,
    });
    cleanups.push(() => a.cleanup());
    const lines: string[] = [];
    const b = await startTestGateway({
      prefix: "handover-b",
      workerName: "b",
      logger: (line) => lines.push(line),
      ...shared,
    });
    cleanups.push(() => b.cleanup());
    const posted = await a.api<{ id: string }>("POST", "/api/channels/y/messages", {
      text: "left running",
    });
    expect(posted.status).toBe(202);
    await waitFor(
      async () =>
        (await a.api<{ runners: unknown[] }>("GET", "/api/runners")).body.runners.length > 0,
      "the turn running on a",
    );
    await a.close();
    const answer = await waitFor(
      async () => (await b.messages("y")).find((m) => m.replyTo === posted.body.id),
      "the message answered by b",
    );
    expect(answer.kind).toBe("reply");
    // Woken by a's shutdown, not found by b's sweep (every 10 s).
    expect(lines.filter((line) => line.includes("took over channel"))).toEqual([]);
  }, 60_000);
});
