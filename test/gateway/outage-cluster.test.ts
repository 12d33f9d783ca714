/**
 * Two workers on one PostgreSQL whose database goes away for longer than a lease: when it
 * comes back, each worker re-validates its leases before it acts again, and every channel is
 * answered exactly once, by one worker. Once with the server stopped for both (either may take
 * the other's channels as they come back), once with one worker cut off from a database the
 * other still reaches (a partition, its connections reset or left unanswered: the other takes
 * its channels and replays them, and its own turn still running stops as its lease expires).
 */

import pg from "pg";
import { describe, expect, it } from "vitest";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import { clusterFixture } from "./cluster-fixture.js";
import type { TestGateway } from "./helpers.js";
import {
  answeredOnce,
  endHeldTurn,
  healthy,
  holdTurn,
  outageLines,
  type Posted,
  promptsWith,
  runnerOf,
} from "./outage-helpers.js";

const fixture = clusterFixture("outage", { scenario: "hold" });

function worker(url: string, name: string, lines: string[]): Promise<TestGateway> {
  return fixture.worker(url, name, { logger: (line) => lines.push(line) });
}

/** No split brain: a channel's agent runs on one worker at most. */
async function expectDrivenByOneAtMost(workers: TestGateway[], channelId: string) {
  const driving: TestGateway[] = [];
  for (const gateway of workers) {
    if ((await runnerOf(gateway, channelId)) !== undefined) driving.push(gateway);
  }
  expect(driving.length).toBeLessThanOrEqual(1);
}

describe("two PostgreSQL workers whose database goes away for longer than a lease", () => {
  it("answer each channel once when the stopped server comes back, by one worker", async () => {
    const url = await fixture.createDatabase();
    const linesA: string[] = [];
    const linesB: string[] = [];
    const a = await worker(url, "stop-a", linesA);
    const b = await worker(url, "stop-b", linesB);
    const alpha = await holdTurn(a, url, "alpha", "alpha question");
    const beta = await holdTurn(b, url, "beta", "beta question");
    a.setScenario("normal");
    b.setScenario("normal");

    await fixture.server().stop();
    try {
      await endHeldTurn(a, "alpha", alpha.pid);
      await endHeldTurn(b, "beta", beta.pid);
      // Two lease periods: neither worker could renew.
      await new Promise((resolve) => setTimeout(resolve, 4000));
    } finally {
      await fixture.server().start();
    }
    await healthy(a);
    await healthy(b);

    for (const channelId of ["alpha", "beta"]) {
      const messages = await answeredOnce(a, channelId);
      expect(messages.filter((message) => message.kind === "reply")).toHaveLength(1);
      await expectDrivenByOneAtMost([a, b], channelId);
    }
    // Afterwards each channel is driven by one worker: a message through either is answered
    // once, by one agent.
    for (const [channelId, through] of [
      ["alpha", b],
      ["beta", a],
    ] as const) {
      const text = `${channelId} after the outage`;
      const posted = await through.api<Posted>("POST", `/api/channels/${channelId}/messages`, {
        text,
      });
      expect(posted.status).toBe(202);
      const messages = await answeredOnce(through, channelId);
      expect(messages.filter((message) => message.kind === "reply")).toHaveLength(2);
      expect(promptsWith(a, text) + promptsWith(b, text)).toBe(1);
      await expectDrivenByOneAtMost([a, b], channelId);
    }
    for (const lines of [linesA, linesB]) {
      const { lost, back } = outageLines(lines);
      expect([lost.length, back.length]).toEqual([1, 1]);
    }
  });

  it("let the other worker take a cut-off worker's channel, whose late answer is refused", async () => {
    const url = await fixture.createDatabase();
    const { proxy, url: cutOff } = await fixture.proxied(url);
    const linesA: string[] = [];
    const linesB: string[] = [];
    const a = await worker(cutOff, "cut-a", linesA);
    const b = await worker(url, "cut-b", linesB);
    b.setScenario("normal");
    const held = await holdTurn(a, url, "gamma", "gamma question");
    a.setScenario("normal");

    await proxy.cut();
    await endHeldTurn(a, "gamma", held.pid);
    // The lease runs out; the worker that still reaches the database takes the channel and
    // replays its message.
    const messages = await answeredOnce(b, "gamma");
    expect(messages.filter((message) => message.kind === "reply")).toHaveLength(1);
    expect(promptsWith(b, "gamma question")).toBe(1);

    await proxy.restore();
    await healthy(a);
    await waitFor(
      () => linesA.some((line) => line.includes("lost the lease of channel gamma")),
      "the cut-off worker to find its lease lost",
    );
    await waitFor(
      async () => (await runnerOf(a, "gamma")) === undefined,
      "the cut-off worker to stop the channel's agent",
    );
    // It answers nothing for the channel again: a message through it goes to the owner.
    const next = await a.api<Posted>("POST", "/api/channels/gamma/messages", { text: "gamma 2" });
    expect(next.body.disposition).toBe("forwarded");
    expect((await answeredOnce(a, "gamma")).filter((m) => m.kind === "reply")).toHaveLength(2);
    expect(promptsWith(a, "gamma 2")).toBe(0);
    // Its answer kept through the outage was refused: its stop waits for every write it holds
    // (`waitForHeldWrites`), and each message still has one reply (`answeredOnce`).
    await a.close();
    expect((await answeredOnce(b, "gamma")).filter((m) => m.kind === "reply")).toHaveLength(2);
    expect(outageLines(linesA).lost).toHaveLength(1);
    expect(outageLines(linesB).lost).toEqual([]);
  });

  it.each([
    ["reset", "cut"],
    ["unanswered", "stall"],
  ] as const)(
    "stop a cut-off worker's turn when its lease runs out (connections %s), so one agent answers",
    async (_how, cutOff) => {
      const url = await fixture.createDatabase();
      const proxied = await fixture.proxied(url);
      const proxy = proxied.proxy;
      const linesA: string[] = [];
      const a = await worker(proxied.url, `${cutOff}-a`, linesA);
      const b = await worker(url, `${cutOff}-b`, []);
      b.setScenario("normal");
      const held = await holdTurn(a, url, "delta", "delta question");
      a.setScenario("normal");

      // A stall is the harder case: the renewal hangs (till its 15 s timeout) rather than failing.
      await proxy[cutOff]();
      // The lease as the cut-off worker last renewed it (the database's clock, the same machine's).
      const direct = new pg.Client({ connectionString: url });
      await direct.connect();
      const { rows } = await direct
        .query<{ expires_at: Date }>("SELECT expires_at FROM leases WHERE channel_id = 'delta'")
        .finally(() => direct.end());
      const expiresAt = rows[0]!.expires_at.getTime();
      // Unreachable for a whole lease, the worker stops the turn it can no longer vouch for: its
      // agent is gone when the lease runs out (not a renewal period later), before the other
      // worker's takeover gives its own agent the message.
      let stoppedAt: number | undefined;
      let takenAt: number | undefined;
      await waitFor(
        () => {
          stoppedAt ??= isAlive(held.pid) ? undefined : Date.now();
          takenAt ??= promptsWith(b, "delta question") > 0 ? Date.now() : undefined;
          return stoppedAt !== undefined && takenAt !== undefined;
        },
        "the cut-off worker to stop the turn and the other to take the channel",
        30_000,
      );
      const report = JSON.stringify({
        stopped: stoppedAt! - expiresAt,
        taken: takenAt! - expiresAt,
      });
      // Early by up to a renewal period when one reached the database just as the cut came.
      expect(stoppedAt! - expiresAt, report).toBeGreaterThan(-900);
      expect(stoppedAt! - expiresAt, report).toBeLessThan(250);
      expect(stoppedAt!, report).toBeLessThan(takenAt!);
      expect(await runnerOf(a, "delta")).toBeUndefined();
      expect(linesA.some((line) => line.includes("lease of channel delta ran out"))).toBe(true);
      const messages = await answeredOnce(b, "delta");
      expect(messages.filter((message) => message.kind === "reply")).toHaveLength(1);
      expect(promptsWith(b, "delta question")).toBe(1);

      await proxy.restore();
      await healthy(a);
      expect(await runnerOf(a, "delta")).toBeUndefined();
      // Back, it neither stores a second answer nor runs the message again: its stop waits for
      // every write it holds and every turn it routed.
      await a.close();
      expect((await answeredOnce(b, "delta")).filter((m) => m.kind === "reply")).toHaveLength(1);
      expect(promptsWith(a, "delta question")).toBe(1);
    },
  );
});
