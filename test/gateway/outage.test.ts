/**
 * The database is a dependency that fails too: the PostgreSQL server of the tests is stopped
 * mid-run and started again. Meanwhile the API answers 503 with the reason and `Retry-After`,
 * `/api/health` says the store is down, the worker logs one line when it is lost and one when
 * it is back, and a turn that ends during the outage keeps its answer until it can be stored:
 * everything accepted before the stop is answered exactly once. And a database that stops
 * answering (statements hanging, not failing) for longer than a lease: the running turn stops
 * as its lease runs out, and is replayed once the hung renewal finds the lease still its own.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it, onTestFailed } from "vitest";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import { clusterFixture } from "./cluster-fixture.js";
import { openEvents, startTestGateway } from "./helpers.js";
import {
  answeredOnce,
  endHeldTurn,
  healthy,
  holdTurn,
  outageLines,
  type Posted,
  promptsWith,
  runnerOf,
  runners,
} from "./outage-helpers.js";

const fixture = clusterFixture("outage", { scenario: "hold" });

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const UNAVAILABLE =
  /^store unavailable: connection [a-z ()]+ to postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+; retrying$/;

describe("a PostgreSQL worker whose database goes away and comes back", () => {
  it("answers 503 with the reason meanwhile, and then answers everything accepted once", async () => {
    const url = await fixture.createDatabase();
    const lines: string[] = [];
    // A failure that names no step (a wait past the test's time) still shows what the worker said.
    onTestFailed(() => console.error(`the worker's log:\n${lines.join("\n")}`));
    const solo = await fixture.worker(url, "solo", { logger: (line) => lines.push(line) });
    const held = await holdTurn(solo, url, "held", "long");
    solo.setScenario("normal");
    const quick = await solo.api<Posted>("POST", "/api/channels/quick/messages", { text: "hi" });
    expect(quick.status).toBe(202);
    await answeredOnce(solo, "quick");
    // A schedule falls due while the database is away (its cron alone would fire next year).
    const schedule = await solo.api<{ schedule: { id: string } }>("POST", "/api/schedules", {
      cron: "0 0 1 1 *",
      channel: "yearly",
      prompt: "missed firing",
    });
    expect(schedule.status).toBe(201);
    await sql(url, "UPDATE schedules SET next_run_at = now() + interval '1 second'");

    // Someone watching the held channel's stream through the outage.
    const watching = openEvents(`${solo.url}/api/channels/held/events?token=${solo.token}`);
    await waitFor(() => watching.comments.length > 0, "the stream to open");
    await fixture.server().stop();
    try {
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
      expect(Number(health.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await health.json()).toMatchObject({
        ok: false,
        worker: "solo",
        store: { ok: false, error: expect.stringMatching(UNAVAILABLE) },
      });
      // What needs no store still answers.
      expect((await runners(solo)).map((runner) => runner.channelId)).toContain("held");

      // The held turn ends while the database is away, and the outage outlasts the lease.
      await endHeldTurn(solo, "held", held.pid);
      await new Promise((resolve) => setTimeout(resolve, 3000));
    } finally {
      await fixture.server().start();
    }

    await healthy(solo);
    const heldMessages = await answeredOnce(solo, "held");
    expect(heldMessages.map((message) => [message.kind, message.text])).toEqual([
      ["user", "long"],
      ["reply", expect.stringContaining("long")],
    ]);
    // What the agent wrote during the outage reaches the stream once the database is back, in
    // order, before the reply (the page would otherwise show the text cut, then the reply).
    const reply = await watching.waitFor((event) => event.data.type === "reply", "the reply");
    const wrote = watching.events.findIndex(
      (event) => event.data.type === "text_delta" && String(event.data.text).startsWith("echo: "),
    );
    expect(wrote).toBeGreaterThan(-1);
    expect(wrote).toBeLessThan(watching.events.indexOf(reply));
    expect(watching.events.filter((event) => event.data.type === "reply")).toHaveLength(1);
    await watching.close();
    expect((await answeredOnce(solo, "quick")).filter((m) => m.kind === "reply")).toHaveLength(1);
    const after = await solo.api<Posted>("POST", "/api/channels/quick/messages", { text: "back" });
    expect(after.status).toBe(202);
    expect((await answeredOnce(solo, "quick")).filter((m) => m.kind === "reply")).toHaveLength(2);
    // The firing missed meanwhile runs once the database is back.
    const yearly = await answeredOnce(solo, "yearly");
    expect(yearly.filter((message) => message.kind === "user").map((m) => m.text)).toEqual([
      "missed firing",
    ]);

    const { lost, back } = outageLines(lines);
    expect(lost).toEqual([expect.stringMatching(/^gateway: store unavailable: connection .*/)]);
    expect(back).toEqual([expect.stringMatching(/^gateway: store back after \d+\.\d s /)]);
    expect(lines.filter((line) => /routing error|renewal failed|could not/.test(line))).toEqual([]);
  });

  it("stops a turn whose lease ran out while its statements hung, and answers it when they return", async () => {
    const url = await fixture.createDatabase();
    const { proxy, url: throughProxy } = await fixture.proxied(url);
    const lines: string[] = [];
    const slow = await fixture.worker(throughProxy, "slow", { logger: (line) => lines.push(line) });
    await holdTurn(slow, url, "hung", "hung question");
    slow.setScenario("normal");

    // Nothing is answered for longer than a lease, and less than a statement's 15 s timeout:
    // the store never fails, it is only slow.
    proxy.stall();
    try {
      await waitFor(
        async () => (await runnerOf(slow, "hung")) === undefined,
        "the turn to stop as its lease runs out",
      );
      expect(lines.some((line) => line.includes("lease of channel hung ran out"))).toBe(true);
    } finally {
      await proxy.restore();
    }
    // The renewal that hung comes back with the lease still this worker's (nobody took it):
    // the channel is held again and its message replayed, answered once.
    const messages = await answeredOnce(slow, "hung");
    expect(messages.filter((message) => message.kind === "reply")).toHaveLength(1);
    expect(promptsWith(slow, "hung question")).toBe(2);
    expect(outageLines(lines).lost).toEqual([]);
  });

  it("shuts down within --shutdown-wait while a channel's context usage waits to be stored", async () => {
    const url = await fixture.createDatabase();
    // A session file the worker mirrors into the database: its last bytes must be stored
    // before the answer is (`beforeAnswer`), so during the outage the answer waits, and the
    // context usage its result line gave, stored with the answer, waits with it.
    const sessions = mkdtempSync(join(tmpdir(), "rudder-outage-sessions-"));
    const file = join(sessions, "outage-context.jsonl");
    writeFileSync(file, `${JSON.stringify({ type: "user", line: 1 })}\n`);
    const lines: string[] = [];
    const gateway = await startTestGateway({
      prefix: "outage-context",
      store: { kind: "postgres", url },
      workerName: "context",
      shutdownWaitMs: 1500,
      logger: (line) => lines.push(line),
      engine: {
        claudeBin: FAKE_CLAUDE,
        env: { FAKE_CLAUDE_SCENARIO: "hold", FAKE_CLAUDE_SESSION_ID: "outage-context" },
        sessionFile: (sessionId) => join(sessions, `${sessionId}.jsonl`),
      },
    });
    fixture.gateways.push(gateway);
    try {
      const { pid } = await holdTurn(gateway, url, "context", "hold on");
      await fixture.server().stop();
      appendFileSync(file, `${JSON.stringify({ type: "assistant", line: 2 })}\n`);
      await endHeldTurn(gateway, "context", pid);

      // It used to wait for the database to store that context usage before it waited for
      // anything else, so with the database away it never stopped.
      const started = Date.now();
      const closed = gateway.close().then(() => Date.now() - started);
      const took = await Promise.race([
        closed,
        new Promise<number>((resolve) => setTimeout(() => resolve(Number.NaN), 10_000)),
      ]);
      expect(took).toBeGreaterThanOrEqual(1500);
      expect(took).toBeLessThan(10_000);
      expect(lines.some((line) => line.includes("stopping while the store is unavailable"))).toBe(
        true,
      );
      expect(lines.some((line) => line.includes("did not come back within 1.5 s"))).toBe(true);
    } finally {
      await fixture.server().start();
      rmSync(sessions, { recursive: true, force: true });
    }
  });
});
