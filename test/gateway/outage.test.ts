/**
 * The database is a dependency that fails too: the PostgreSQL server of the tests is stopped
 * mid-run and started again. Meanwhile the API answers 503 with the reason and `Retry-After`,
 * `/api/health` says the store is down, the worker logs one line when it is lost and one when
 * it is back, and a turn that ends during the outage keeps its answer until it can be stored:
 * everything accepted before the stop is answered exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresCluster, startPostgresCluster } from "../fixtures/postgres-cluster.js";
import { type ApiMessage, startTestGateway, type TestGateway, waitFor } from "./helpers.js";

let cluster: PostgresCluster;
const gateways: TestGateway[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  await Promise.allSettled(gateways.map((gateway) => gateway.cleanup()));
  await cluster?.start().catch(() => {});
  await cluster?.destroy();
});

type Posted = { id: string; disposition: string };
type Runner = { channelId: string; pid: number | null; inflight: boolean };

async function worker(url: string, name: string, scenario: string, lines: string[]) {
  const gateway = await startTestGateway({
    prefix: `outage-${name}`,
    scenario,
    store: { kind: "postgres", url },
    workerName: name,
    leaseSeconds: 2,
    logger: (line) => lines.push(line),
  });
  gateways.push(gateway);
  return gateway;
}

async function runners(gateway: TestGateway): Promise<Runner[]> {
  return (await gateway.api<{ runners: Runner[] }>("GET", "/api/runners")).body.runners;
}

/** The pid of the channel's agent once its turn is in flight (the fake holds it). */
function heldTurn(gateway: TestGateway, channelId: string): Promise<number> {
  return waitFor(async () => {
    const runner = (await runners(gateway)).find((each) => each.channelId === channelId);
    return runner?.inflight && runner.pid !== null ? runner.pid : undefined;
  }, `the held turn of ${channelId}`);
}

/** Waits for the channel's turn to end in the agent (its answer now waits for the store). */
function turnEnded(gateway: TestGateway, channelId: string): Promise<true> {
  return waitFor(async () => {
    const runner = (await runners(gateway)).find((each) => each.channelId === channelId);
    return runner !== undefined && !runner.inflight;
  }, `the turn of ${channelId} to end`);
}

/** The replies stored for each user message of the channel, once every one has one. */
async function answeredOnce(gateway: TestGateway, channelId: string): Promise<ApiMessage[]> {
  const messages = await waitFor(
    async () => {
      const list = await gateway.messages(channelId);
      const users = list.filter((message) => message.kind === "user");
      return users.length > 0 && users.every((message) => message.state === "answered")
        ? list
        : undefined;
    },
    `every message of ${channelId} answered`,
    60_000,
  );
  for (const user of messages.filter((message) => message.kind === "user")) {
    expect(messages.filter((message) => message.replyTo === user.id)).toHaveLength(1);
  }
  return messages;
}

const UNAVAILABLE =
  /^store unavailable: connection [a-z ()]+ to postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+; retrying$/;

describe("a PostgreSQL worker whose database goes away and comes back", () => {
  it("answers 503 with the reason meanwhile, and then answers everything accepted once", async () => {
    const url = await cluster.createDatabase();
    const lines: string[] = [];
    const solo = await worker(url, "solo", "hold", lines);
    const held = await solo.api<Posted>("POST", "/api/channels/held/messages", { text: "long" });
    expect(held.body.disposition).toBe("started");
    const pid = await heldTurn(solo, "held");
    solo.setScenario("normal");
    const quick = await solo.api<Posted>("POST", "/api/channels/quick/messages", { text: "hi" });
    expect(quick.status).toBe(202);
    await answeredOnce(solo, "quick");

    await cluster.stop();
    const listed = await fetch(`${solo.url}/api/channels`, {
      headers: { authorization: `Bearer ${solo.token}` },
    });
    expect(listed.status).toBe(503);
    expect(Number(listed.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await listed.json()) as { error: string }).error).toMatch(UNAVAILABLE);
    const refused = await solo.api<{ error: string }>("POST", "/api/channels/late/messages", {
      text: "during the outage",
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(UNAVAILABLE);
    const health = await fetch(`${solo.url}/api/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      ok: false,
      worker: "solo",
      store: { ok: false, error: expect.stringMatching(UNAVAILABLE) },
    });
    // What needs no store still answers.
    expect((await runners(solo)).map((runner) => runner.channelId)).toContain("held");

    // The held turn ends while the database is away, and the outage outlasts the lease.
    process.kill(pid, "SIGUSR2");
    await turnEnded(solo, "held");
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await cluster.start();

    await waitFor(
      async () => (await fetch(`${solo.url}/api/health`)).status === 200,
      "the worker to reach the database again",
      30_000,
    );
    const heldMessages = await answeredOnce(solo, "held");
    expect(heldMessages.map((message) => [message.kind, message.text])).toEqual([
      ["user", "long"],
      ["reply", expect.stringContaining("long")],
    ]);
    expect((await answeredOnce(solo, "quick")).filter((m) => m.kind === "reply")).toHaveLength(1);
    const after = await solo.api<Posted>("POST", "/api/channels/quick/messages", { text: "back" });
    expect(after.status).toBe(202);
    expect((await answeredOnce(solo, "quick")).filter((m) => m.kind === "reply")).toHaveLength(2);

    expect(lines.filter((line) => line.includes("store unavailable"))).toEqual([
      expect.stringMatching(/^gateway: store unavailable: connection .* retrying$/),
    ]);
    expect(lines.filter((line) => line.includes("store back"))).toHaveLength(1);
    expect(lines.filter((line) => /routing error|renewal failed|could not/.test(line))).toEqual([]);
  });
});
