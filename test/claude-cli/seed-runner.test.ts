/**
 * The seed test (echo-core tests/test_claude_runner.py) ported assertion for assertion, against
 * test/fixtures/fake-claude: a real executable over real OS pipes, never a mocked spawn.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ClaudeProcess } from "../../src/claude-cli/claude-process.js";
import { ClaudeTimeoutError } from "../../src/claude-cli/errors.js";
import { isRateLimitError } from "../../src/claude-cli/rate-limit.js";
import {
  getRegistry,
  RunnerRegistry,
  resetRegistryForTests,
} from "../../src/claude-cli/runner-registry.js";
import type { TurnResult } from "../../src/claude-cli/turn-result.js";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import { fakeProcessFactory } from "./helpers.js";

const factory = fakeProcessFactory();
const makeProc = factory.make;
const fakeOptions = { claudeBin: FAKE_CLAUDE, terminateGraceMs: 1000 };

function setScenario(proc: ClaudeProcess, scenario: string): void {
  proc.options.env!.FAKE_CLAUDE_SCENARIO = scenario;
}

beforeEach(async () => {
  await resetRegistryForTests();
});

afterEach(async () => {
  await factory.cleanup();
  await resetRegistryForTests();
});

describe("T1: normal turn shape, rate limit, timeout", () => {
  it("runTurn matches the runClaude result shape", async () => {
    const proc = makeProc("normal");
    const result = await proc.runTurn("hello");
    expect(new Set(Object.keys(result))).toEqual(
      new Set([
        "result",
        "sessionId",
        "usage",
        "totalCostUsd",
        "costUsd",
        "durationMs",
        "numTurns",
        "intermediateCount",
        "subtype",
        "isError",
      ]),
    );
    expect(result.isError).toBe(false);
    expect(result.sessionId).toBe("fake-session-1");
  });

  it("runTurn wraps external content", async () => {
    const proc = makeProc("normal");
    const result = await proc.runTurn("plain text from Marius");
    expect(result.result).toContain("[EXTERNAL CONTENT]");
    expect(result.result).toContain("[END EXTERNAL CONTENT]");
    expect(result.result).toContain("plain text from Marius");
  });

  it("timeout raises the exact message", async () => {
    const proc = makeProc("timeout");
    const error = await proc.runTurn("hi", { timeoutMs: 1000 }).catch((caught) => caught);
    expect(error).toBeInstanceOf(ClaudeTimeoutError);
    expect((error as Error).message).toMatch(/Claude CLI timed out after 1s/);
  });

  it("rate limit raises an error the router can detect", async () => {
    const proc = makeProc("rate_limit");
    const error = await proc.runTurn("hi").catch((caught) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(isRateLimitError(String(error))).toBe(true);
  });

  it("a non-rate-limit error is returned, not raised", async () => {
    const proc = makeProc("generic_error");
    const result = await proc.runTurn("hi");
    expect(result.isError).toBe(true);
    expect(result.subtype).toBe("error_max_turns");
  });
});

describe("steering: a mid-turn message lands on the same stdin", () => {
  it("reflects the second message in the same turn", async () => {
    const proc = makeProc("steer");
    const texts: string[] = [];
    const running = proc.runTurn("first message", { onText: (text) => texts.push(text) });
    // The fake's first assistant block proves it now blocks reading stdin, awaiting the steer.
    await waitFor(() => texts.length >= 1);
    expect(proc.inflight).toBe(true);

    const outcome = await proc.steer("second message");
    const result = await running;

    expect(outcome.status).toBe("steered");
    expect(outcome.turn).toBeUndefined();
    expect(result.result).toContain("steered:");
    expect(result.numTurns).toBe(2);
    expect(proc.inflight).toBe(false);
  });

  it("steer wraps external content", async () => {
    const proc = makeProc("steer");
    const texts: string[] = [];
    const running = proc.runTurn("first", { onText: (text) => texts.push(text) });
    await waitFor(() => texts.length >= 1);
    await proc.steer("stai, schimbare de plan");
    const result = await running;

    expect(result.result).toContain("[EXTERNAL CONTENT]");
    expect(result.result).toContain("stai, schimbare de plan");
  });

  it("keeps steered texts for re-dispatch when the turn fails", async () => {
    // A process already up (its first turn answered), so that the 1 s bound of the hanging
    // turn is not spent starting it: under load a start took longer, and the turn timed out
    // before the steer.
    const proc = makeProc("timeout_later");
    await proc.runTurn("warm up");
    const running = proc.runTurn("first", { timeoutMs: 1000 }).catch((error) => {
      if (!(error instanceof ClaudeTimeoutError)) throw error;
    });
    expect(proc.inflight).toBe(true);

    const outcome = await proc.steer("please don't get lost");
    expect(outcome.status).toBe("steered");
    await running;

    const pending = proc.popPendingSteers();
    expect(pending).toEqual(["please don't get lost"]);
    expect(proc.popPendingSteers()).toEqual([]);
  });
});

describe("C1: steer() with no turn in flight", () => {
  it("becomes ran_as_turn", async () => {
    const proc = makeProc("normal");
    const first = await proc.runTurn("warm up");
    expect(first.isError).toBe(false);
    expect(proc.inflight).toBe(false);

    const outcome = await proc.steer("out of band message");

    expect(outcome.status).toBe("ran_as_turn");
    expect(outcome.turn).toBeDefined();
    expect((outcome.turn as TurnResult).result).toContain("out of band message");
  });
});

describe("T7: a dead process on steer falls back to a turn", () => {
  it("reports process_dead and delivers the text", async () => {
    const proc = makeProc("normal");
    await proc.runTurn("warm up");
    process.kill(proc.pid!, "SIGKILL");
    await waitFor(() => !proc.alive());

    setScenario(proc, "normal");
    const outcome = await proc.steer("please deliver me");

    expect(outcome.status).toBe("process_dead");
    expect(outcome.turn).toBeDefined();
    expect((outcome.turn as TurnResult).result).toContain("please deliver me");
  });
});

describe("M2: a timeout kills the process; the next turn respawns with --resume", () => {
  it("respawns with --resume after the timeout kill", async () => {
    // Up before the hanging turn (see "keeps steered texts"): its 1 s is the turn's alone.
    const proc = makeProc("timeout_later");
    await proc.runTurn("warm up");
    await expect(proc.runTurn("hi", { timeoutMs: 1000 })).rejects.toBeInstanceOf(
      ClaudeTimeoutError,
    );

    expect(proc.sessionId).toBe("fake-session-1");
    expect(proc.alive()).toBe(false);
    const deadPid = proc.pid;

    const command = proc.buildCommand();
    expect(command).toContain("--resume");
    expect(command[command.indexOf("--resume") + 1]).toBe("fake-session-1");

    setScenario(proc, "normal");
    const result = await proc.runTurn("again", { timeoutMs: 5000 });

    expect(result.isError).toBe(false);
    expect(proc.pid).not.toBe(deadPid);
  });
});

describe("T3: the stderr pipe never deadlocks a turn", () => {
  it("survives a flood of stderr", async () => {
    const proc = makeProc("big_stderr");
    const result = await proc.runTurn("hello", { timeoutMs: 15_000 });
    expect(result.isError).toBe(false);
    expect(proc.stderrTail().length).toBeGreaterThan(0);
    expect(proc.stderrTail().length).toBeLessThanOrEqual(50);
  });
});

describe("RunnerRegistry: maxLive degradation, reaper resilience", () => {
  it("degrades a second channel to one-shot at maxLive", async () => {
    const registry = new RunnerRegistry({
      maxLive: 1,
      idleMinutes: 20,
      processOptions: fakeOptions,
    });
    const procA = registry.get("channel-a");
    expect(procA).not.toBeNull();
    const procB = registry.get("channel-b");
    expect(procB).toBeNull();
    // The same channel is never punished by its own occupied slot.
    expect(registry.get("channel-a")).toBe(procA);
    await registry.close();
  });

  it("never reaps a process in flight", async () => {
    const registry = new RunnerRegistry({
      maxLive: 2,
      idleMinutes: 1,
      processOptions: fakeOptions,
    });
    const proc = registry.get("channel-a")!;
    proc.inflight = true;
    proc.lastActive = performance.now() - 3_600_000;
    await registry.reapOnce();
    expect(registry.liveCount()).toBe(1);
    await registry.close();
  });

  it("reaps an idle process", async () => {
    const registry = new RunnerRegistry({
      maxLive: 2,
      idleMinutes: 1,
      processOptions: fakeOptions,
    });
    const proc = registry.get("channel-a")!;
    proc.inflight = false;
    proc.lastActive = performance.now() - 3_600_000;
    await registry.reapOnce();
    expect(registry.liveCount()).toBe(0);
    await registry.close();
  });

  it("survives a stop() that throws", async () => {
    const warnings: string[] = [];
    const registry = new RunnerRegistry({
      maxLive: 2,
      idleMinutes: 1,
      processOptions: fakeOptions,
      logger: { warn: (message) => warnings.push(message) },
    });
    const proc = registry.get("channel-a")!;
    proc.inflight = false;
    proc.lastActive = performance.now() - 3_600_000;
    proc.stop = () => {
      throw new Error("stop() exploded");
    };
    await registry.reapOnce(); // must not throw
    expect(registry.liveCount()).toBe(0); // bookkeeping removed regardless
    expect(warnings.join("\n")).toContain("stop() exploded");
    await registry.close();
  });

  it("stopAll clears the registry", async () => {
    const proc = makeProc("normal");
    const registry = new RunnerRegistry({ maxLive: 2, idleMinutes: 20 });
    registry.adopt("test-channel", proc);
    await proc.runTurn("hello"); // actually spawns
    expect(proc.alive()).toBe(true);
    await registry.stopAll();
    expect(registry.liveCount()).toBe(0);
    expect(proc.alive()).toBe(false);
    await registry.close();
  });

  it("getRegistry is a singleton until reset", async () => {
    const r1 = getRegistry({ maxLive: 3, idleMinutes: 5 });
    const r2 = getRegistry({ maxLive: 99 }); // ignored once created
    expect(r1).toBe(r2);
    expect(r1.maxLive).toBe(3);

    await resetRegistryForTests();

    const r3 = getRegistry({ maxLive: 7 });
    expect(r3).not.toBe(r1);
    expect(r3.maxLive).toBe(7);
  });

  it("maxLive <= 0 logs a warning and always degrades", () => {
    const warnings: string[] = [];
    const registry = new RunnerRegistry({
      maxLive: 0,
      idleMinutes: 20,
      logger: { warn: (message) => warnings.push(message) },
    });
    expect(warnings.some((message) => message.includes("maxLive"))).toBe(true);
    expect(registry.get("any-channel")).toBeNull();
  });
});
