/**
 * A channel removed by force (`DELETE /api/channels/:id?force=1`) before its agent started: with
 * `--max-live 1` and another channel's agent busy, the removed channel's turn either waits for
 * its start (`AgentStarts`: a one-shot process is to be started) or waits in the agent cap's
 * line (`--max-agents`). Either way the removal answers at once, no agent is started for the
 * channel afterwards, the cap holds and no process is left.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RegistryProcessPool } from "../../src/gateway/agents/process-pool.js";
import { EventBus } from "../../src/gateway/event-bus.js";
import { ChannelRemoval } from "../../src/gateway/routing/channel-removal.js";
import { SqliteGatewayStore } from "../../src/gateway/store/sqlite/sqlite-store.js";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { startInProcessRouter } from "../helpers/in-process-router.js";
import { processesMatching } from "../helpers/process-scan.js";
import { waitFor } from "../helpers/wait-for.js";
import { fakeLogEntries, startTestGateway } from "./helpers.js";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The channels the fake agents of `log` were started for (the channel prompt names each). */
function startedFor(log: string): string[] {
  return fakeLogEntries(log)
    .filter((entry) => entry.event === "start")
    .map(
      (entry) => /in the channel "([^"]+)"/.exec((entry.args as string[]).join(" "))?.[1] ?? "?",
    );
}

/** Rejects, naming `what`, when `promise` has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * The most agent processes of this file's channels (`channelPrefix`) alive at once: a process
 * whose parent matches too is the launcher script's subshell, not an agent.
 */
function sampleAgents(channelPrefix: string): { most(): number; stop(): void } {
  let most = 0;
  const timer = setInterval(() => {
    const pids = processesMatching(`in the channel "${channelPrefix}`);
    const agents = pids.filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return !pids.includes(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      } catch {
        return false;
      }
    });
    most = Math.max(most, agents.length);
  }, 20);
  return { most: () => most, stop: () => clearInterval(timer) };
}

describe("a channel removed by force before its agent started", () => {
  it("while its turn waits for its start: nothing is started for it, the removal answers", async () => {
    const root = mkdtempSync(join(tmpdir(), "rudder-removal-start-"));
    const log = join(root, "fake.log");
    const scenario = join(root, "scenario");
    writeFileSync(scenario, "interrupt");
    const store = new SqliteGatewayStore(join(root, "gateway.db"));
    const pool = new RegistryProcessPool({
      maxLive: 1,
      idleMinutes: 1,
      processOptions: {
        claudeBin: FAKE_CLAUDE_SWITCH,
        env: { GATEWAY_TEST_SCENARIO_FILE: scenario, FAKE_CLAUDE_LOG: log },
      },
      logger: () => {},
    });
    const { router, close } = await startInProcessRouter(
      { store, pool, bus: new EventBus() },
      root,
    );
    cleanups.push(close);
    const removal = new ChannelRemoval({
      store,
      pool,
      router,
      schedules: { list: async () => [], remove: async () => false },
      interruptGraceMs: 500,
    });
    const sampler = sampleAgents("start-");
    try {
      // The busy channel keeps the one kept process; the next channel's turn gets a one-shot.
      expect((await router.deliver("start-busy", "work slowly")).disposition).toBe("started");
      await waitFor(() => startedFor(log).includes("start-busy"), "the busy channel's agent");
      const queued = await router.deliver("start-queued", "never to be run");
      expect(queued.disposition).toBe("one_shot");
      // Its start waits for a turn of the event loop (`AgentStarts`): the removal's interrupt,
      // made before any, finds no agent running yet.
      const removed = await within(removal.remove("start-queued", true), 10_000, "the removal");
      expect(removed).toMatchObject({ ok: true, removed: "start-queued" });
      expect(await store.getMessage(queued.id)).toBeNull();
      // What would start it has run: the busy channel's Stop ends its turn, and a message to a
      // third channel is answered after it.
      writeFileSync(scenario, "normal");
      expect(await router.interrupt("start-busy")).toBe(true);
      const third = await router.deliver("start-third", "after");
      expect((await router.settled(third.id)).state).not.toBe("received");
      expect(startedFor(log)).not.toContain("start-queued");
      expect(processesMatching('in the channel "start-queued"')).toEqual([]);
      expect(pool.list().map((runner) => runner.channelId)).not.toContain("start-queued");
      expect(pool.count()).toBeLessThanOrEqual(2);
    } finally {
      sampler.stop();
    }
    // The kept process and at most one one-shot (`--max-agents` is 16 here).
    expect(sampler.most()).toBeLessThanOrEqual(2);
  }, 30_000);

  it("while it waits in the agent cap's line: the removal answers at once, nothing starts for it after", async () => {
    const gateway = await startTestGateway({
      prefix: "removal-cap",
      maxLive: 1,
      maxAgents: 1,
      scenario: "interrupt",
    });
    cleanups.push(() => gateway.cleanup());
    const sampler = sampleAgents("cap-");
    try {
      const busy = await gateway.api<{ disposition: string }>(
        "POST",
        "/api/channels/cap-busy/messages",
        { text: "work slowly" },
      );
      expect(busy.body.disposition).toBe("started");
      await waitFor(() => startedFor(gateway.fakeLog).includes("cap-busy"), "the busy agent");
      const queued = await gateway.api<{ id: string; disposition: string }>(
        "POST",
        "/api/channels/cap-queued/messages",
        { text: "never to be run" },
      );
      expect(queued.body.disposition).toBe("waiting");
      const removed = await within(
        gateway.api<{ removed: string; messages: number }>(
          "DELETE",
          "/api/channels/cap-queued?force=1",
        ),
        10_000,
        "the removal of a channel waiting for an agent",
      );
      expect(removed).toMatchObject({ status: 200, body: { removed: "cap-queued", messages: 1 } });
      // The busy channel's end frees the only slot: the next channel waiting gets it, not the
      // removed one, whose place in line went with it.
      gateway.setScenario("normal");
      const third = await gateway.api<{ disposition: string }>(
        "POST",
        "/api/channels/cap-third/messages",
        { text: "after" },
      );
      expect(third.body.disposition).toBe("waiting");
      expect((await gateway.api("POST", "/api/channels/cap-busy/interrupt")).status).toBe(200);
      await waitFor(
        async () =>
          (await gateway.messages("cap-third")).some((message) => message.kind === "reply"),
        "the third channel answered",
      );
      expect(startedFor(gateway.fakeLog)).toEqual(["cap-busy", "cap-third"]);
      expect((await gateway.messages("cap-queued")).length).toBe(0);
    } finally {
      sampler.stop();
    }
    expect(sampler.most()).toBeLessThanOrEqual(1);
  }, 30_000);
});
