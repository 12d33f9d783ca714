/** Behaviours beyond the seed, against the fake CLI over real pipes. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ClaudeProcess } from "../../src/claude-cli/claude-process.js";
import { RateLimitError } from "../../src/claude-cli/errors.js";
import { RunnerRegistry } from "../../src/claude-cli/runner-registry.js";
import { killLiveChildren } from "../../src/claude-cli/terminate.js";
import type { TurnResult } from "../../src/claude-cli/turn-result.js";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";
import { runProcess } from "../helpers/owned-process.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import { fakeProcessFactory } from "./helpers.js";

const factory = fakeProcessFactory();
const makeProc = factory.make;
const scratch = mkdtempSync(join(tmpdir(), "rudder-claude-process-"));

afterEach(async () => {
  await factory.cleanup();
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function readLog(path: string): Record<string, unknown>[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("steering into a turn the CLI answers twice", () => {
  it("waits for the queued message's own result and combines both", async () => {
    // The steer carries an image of the process's folder: written as a block after its text.
    const log = join(scratch, "steer-queued.jsonl");
    mkdirSync(join(scratch, "inbox"), { recursive: true });
    writeFileSync(join(scratch, "inbox", "dot.png"), "not really a png");
    const proc = makeProc("steer_queued", {
      extra: { cwd: scratch, env: { FAKE_CLAUDE_LOG: log } },
    });
    const texts: string[] = [];
    const running = proc.runTurn("alpha", { onText: (text) => texts.push(text) });
    await waitFor(() => texts.length >= 1);
    const outcome = await proc.steer("beta", {
      images: [{ path: "inbox/dot.png", mediaType: "image/png" }],
    });
    const result = await running;
    const written = readLog(log).flatMap((entry) =>
      entry.event === "stdin" ? [entry.message as { message?: { content?: unknown } }] : [],
    );
    expect(written.map((line) => Array.isArray(line.message?.content))).toEqual([false, true]);
    const steered = (written[1]?.message?.content ?? []) as Array<Record<string, unknown>>;
    expect(steered.slice(1)).toEqual([
      { type: "text", text: "[attached image: inbox/dot.png]" },
      {
        type: "image",
        source: {
          type: "base64",
          media_type: "image/png",
          data: Buffer.from("not really a png").toString("base64"),
        },
      },
    ]);

    expect(outcome.status).toBe("steered");
    expect(result.result).toContain("first answer:");
    expect(result.result).toContain("alpha");
    expect(result.result).toContain("echo:");
    expect(result.result).toContain("beta");
    expect(result.numTurns).toBe(2);
    expect(result.usage.input_tokens).toBe(20);
    expect(result.costUsd).toBeCloseTo(0.002);

    // The next turn gets its own answer, not a leftover of the previous one.
    const next = await proc.runTurn("gamma");
    expect(next.result).toContain("gamma");
    expect(next.result).not.toContain("beta");
  });
});

/**
 * Runs a turn on "alpha" that keeps the answer handed to it early (`taken.result`, and
 * `onTaken` told); resolves once the CLI has begun answering, so a steer now meets the turn.
 */
async function alphaTurn(proc: ClaudeProcess, onTaken: () => void = () => {}) {
  const texts: string[] = [];
  const taken: { result?: TurnResult } = {};
  const running = proc.runTurn("alpha", {
    onText: (text) => texts.push(text),
    onAnswered: (result) => {
      taken.result = result;
      onTaken();
    },
  });
  await waitFor(() => texts.length >= 1);
  return { running, taken };
}

describe("onAnswered: a message's own answer before its turn ends", () => {
  it("hands the first result to its message at once and leaves it out of the turn's result", async () => {
    // The queued message's own turn takes 300 ms, so the first answer comes well before it.
    const proc = makeProc("steer_queued", {
      extra: { env: { FAKE_CLAUDE_REPLY_DELAY_MS: "300" } },
    });
    const order: string[] = [];
    const { running, taken } = await alphaTurn(proc, () => order.push("alpha answered"));
    const outcome = await proc.steer("beta", { onAnswered: () => order.push("beta answered") });
    await waitFor(() => taken.result !== undefined);
    const early = taken.result;
    expect(proc.inflight).toBe(true);
    const result = await running;
    order.push("turn resolved");

    expect(outcome.status).toBe("steered");
    expect(order).toEqual(["alpha answered", "turn resolved"]);
    expect(early?.result).toContain("first answer:");
    expect(early?.result).toContain("alpha");
    expect(early?.result).not.toContain("beta");
    expect(early?.usage.input_tokens).toBe(10);
    expect(early?.costUsd).toBeCloseTo(0.001);
    expect(early?.numTurns).toBe(1);
    // The turn's result is what came after: beta's answer alone, its usage and cost alone.
    expect(result.result).toContain("beta");
    expect(result.result).not.toContain("first answer:");
    expect(result.usage.input_tokens).toBe(10);
    expect(result.costUsd).toBeCloseTo(0.001);
    expect(result.numTurns).toBe(1);
  });

  it("fails the rest of the turn, keeping its steers, when the CLI cancels them unanswered", async () => {
    const proc = makeProc("steer_queued_cancelled");
    const { running, taken } = await alphaTurn(proc);
    await proc.steer("beta", { onAnswered: () => {} });
    const result = await running;
    expect(taken.result?.result).toContain("first answer:");
    // Not an empty success: nothing answered beta, which is kept for dispatch again.
    expect(result.isError).toBe(true);
    expect(result.subtype).toBe("error_during_execution");
    expect(proc.popPendingSteers()).toEqual(["beta"]);
    expect(proc.alive()).toBe(true);
  });

  it("is not used when another message the same result answered has no taker", async () => {
    const proc = makeProc("steer_queued");
    const texts: string[] = [];
    let called = 0;
    const running = proc.runTurn("alpha", { onText: (text) => texts.push(text) });
    await waitFor(() => texts.length >= 1);
    await proc.steer("beta", { onAnswered: () => (called += 1) });
    const result = await running;
    expect(called).toBe(0);
    expect(result.result).toContain("first answer:");
    expect(result.result).toContain("beta");
  });
});

describe("onStarted: when the CLI has started on a message", () => {
  it("is its started lifecycle line: a steer the CLI only queued before it died never started", async () => {
    const proc = makeProc("crash_after_steer");
    const started: string[] = [];
    const texts: string[] = [];
    const running = proc.runTurn("first", {
      onText: (text) => texts.push(text),
      onStarted: () => started.push("first"),
    });
    await waitFor(() => texts.length >= 1);
    expect(started).toEqual(["first"]);
    const steer = await proc.steer("never started", { onStarted: () => started.push("steer") });
    expect(steer.status).toBe("steered");
    expect((await running).isError).toBe(true);
    expect(started).toEqual(["first"]);
  });

  it("is called for a steer the CLI starts on, once", async () => {
    const proc = makeProc("steer_queued");
    const started: string[] = [];
    const texts: string[] = [];
    const running = proc.runTurn("alpha", {
      onText: (text) => texts.push(text),
      onStarted: () => started.push("alpha"),
    });
    await waitFor(() => texts.length >= 1);
    await proc.steer("beta", { onStarted: () => started.push("beta") });
    await running;
    expect(started).toEqual(["alpha", "beta"]);
  });

  it("is the turn's first line from a CLI that prints no lifecycle lines", async () => {
    const proc = makeProc("no_lifecycle");
    let started = 0;
    const lines: string[] = [];
    const result = await proc.runTurn("one", {
      onEvent: (line) => lines.push(String(line.type)),
      onStarted: () => {
        started += 1;
        lines.push("started");
      },
    });
    expect(result.result).toContain("one");
    expect(started).toBe(1);
    expect(lines[0]).toBe("started");
  });
});

describe("failures are data", () => {
  it("a crash mid-turn is an error result with exit code and stderr tail", async () => {
    const proc = makeProc("crash_mid_turn");
    const events: Record<string, unknown>[] = [];
    const result = await proc.runTurn("hello", { onEvent: (event) => events.push(event) });
    expect(result.isError).toBe(true);
    expect(result.subtype).toBe("process_crashed");
    expect(result.result).toContain("code 3");
    expect(result.result).toContain("simulated crash");
    expect(events.some((event) => event.type === "output_error")).toBe(true);
    expect(proc.alive()).toBe(false);
  });

  it("keeps the steered text of a turn whose process crashed", async () => {
    const proc = makeProc("crash_after_steer");
    const texts: string[] = [];
    const running = proc.runTurn("first", { onText: (text) => texts.push(text) });
    await waitFor(() => texts.length >= 1);
    expect((await proc.steer("do not lose me")).status).toBe("steered");
    const result = await running;
    expect(result.subtype).toBe("process_crashed");
    expect(result.result).toContain("code 4");
    expect(proc.popPendingSteers()).toEqual(["do not lose me"]);

    proc.options.env!.FAKE_CLAUDE_SCENARIO = "normal";
    const again = await proc.runTurn("after the crash");
    expect(again.isError).toBe(false);
  });

  it("a steer whose write fails with EPIPE counts the process as dead", async () => {
    const proc = makeProc("stdin_closed");
    const texts: string[] = [];
    const running = proc.runTurn("first", { onText: (text) => texts.push(text) });
    await waitFor(() => texts.length >= 1);
    const deadPid = proc.pid;
    proc.options.env!.FAKE_CLAUDE_SCENARIO = "normal";
    const outcome = await proc.steer("second");
    expect(outcome.status).toBe("process_dead");
    expect(outcome.turn?.result).toContain("second");
    expect(proc.pid).not.toBe(deadPid);
    const first = await running;
    expect(first.subtype).toBe("process_crashed");
    expect(proc.popPendingSteers()).toEqual([]);
  });

  it("survives non-JSON lines, blank lines and CRLF", async () => {
    const proc = makeProc("garbage_output");
    const events: Record<string, unknown>[] = [];
    const result = await proc.runTurn("hello", { onEvent: (event) => events.push(event) });
    expect(result.isError).toBe(false);
    expect(result.result).toContain("echo:");
    expect(events.filter((event) => event.type === "output_error")).toHaveLength(2);
    expect(events.some((event) => event.subtype === "note")).toBe(true);
  });

  it("parses a 10 MB line", async () => {
    const proc = makeProc("huge_line");
    const texts: string[] = [];
    const result = await proc.runTurn("hello", { onText: (text) => texts.push(text) });
    expect(result.isError).toBe(false);
    expect(texts[0]?.length).toBeGreaterThan(10 * 1024 * 1024);
  });

  it("a line over the cap ends the turn at once with an error saying what was lost", async () => {
    const proc = makeProc("huge_line", { extra: { maxLineLength: 1024 * 1024 } });
    const events: Record<string, unknown>[] = [];
    const result = await proc.runTurn("hello", { onEvent: (event) => events.push(event) });
    expect(events.find((event) => event.type === "output_error")?.kind).toBe("line_too_long");
    expect(result.isError).toBe(true);
    expect(result.subtype).toBe("output_too_long");
    expect(result.result).toContain('an "assistant" line longer than the runner\'s cap of 1 MiB');
    expect(result.result).toContain("is lost");
    expect(proc.alive()).toBe(false);
  });

  it("a 20 MB line over the default 16 MiB cap fails the turn well before any timeout", async () => {
    const log = join(scratch, "over-cap.log");
    const proc = makeProc("over_cap_line", { extra: { env: { FAKE_CLAUDE_LOG: log } } });
    const started = performance.now();
    const result = await proc.runTurn("reply at length", { timeoutMs: 120_000 });
    expect(performance.now() - started).toBeLessThan(60_000);
    expect(result.subtype).toBe("output_too_long");
    expect(result.result).toContain("16 MiB");
    expect(readLog(log).some((entry) => entry.event === "sigterm_delayed")).toBe(true);

    // The conversation goes on: the next turn resumes the same session on a new process.
    const next = await proc.runTurn("shorter, please");
    expect(next.isError).toBe(false);
    expect(next.result).toContain("shorter, please");
    const starts = readLog(log).filter((entry) => entry.event === "start");
    expect(starts).toHaveLength(2);
    expect(starts[1]?.args).toEqual(expect.arrayContaining(["--resume", "fake-session-1"]));
  });

  it("a message sent while the turn is being failed starts the next turn", async () => {
    const log = join(scratch, "failing-steer.log");
    const proc = makeProc("over_cap_line", { extra: { env: { FAKE_CLAUDE_LOG: log } } });
    let steer: Promise<Awaited<ReturnType<ClaudeProcess["steer"]>>> | undefined;
    const result = await proc.runTurn("reply at length", {
      onEvent: (event) => {
        if (event.type === "output_error") steer ??= proc.steer("are you still there?");
      },
    });
    expect(result.subtype).toBe("output_too_long");
    expect(steer).toBeDefined();
    const outcome = await steer;
    expect(outcome?.status).not.toBe("steered");
    expect(outcome?.turn?.isError).toBe(false);
    expect(outcome?.turn?.result).toContain("are you still there?");
    expect(proc.popPendingSteers()).toEqual([]);
  });

  it("a binary that cannot start is a spawn_failed result", async () => {
    const proc = new ClaudeProcess("missing", { claudeBin: join(scratch, "no-such-claude") });
    const result = await proc.runTurn("hello");
    expect(result.isError).toBe(true);
    expect(result.subtype).toBe("spawn_failed");
    expect(result.result).toContain("no-such-claude");
  });

  it("a rate limit carries structured detection and the reset time when named", async () => {
    const proc = makeProc("rate_limit");
    const error = await proc.runTurn("hi").catch((caught) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).resetAt).toBeUndefined();
  });

  it("stop() during a turn resolves it as process_stopped and keeps its steers", async () => {
    const proc = makeProc("timeout");
    const running = proc.runTurn("first");
    await waitFor(() => proc.sessionId !== null);
    await proc.steer("keep me");
    await proc.stop();
    const result = await running;
    expect(result.subtype).toBe("process_stopped");
    expect(proc.popPendingSteers()).toEqual(["keep me"]);
    expect(proc.alive()).toBe(false);
  });
});

describe("process supervision", () => {
  // Stopped once its tool runs, not by a short turn timeout: under load the fake's own start
  // could outlast such a bound, which then ended the turn before the tool (or its text) existed.
  // A timeout ends the child the same way (seed-runner.test.ts times turns out).
  it("a child ignoring SIGTERM is SIGKILLed, with the tool process in its own session", async () => {
    const pidFile = join(scratch, "grandchild.pid");
    const log = join(scratch, "ignore-sigterm.log");
    const proc = makeProc("ignore_sigterm", {
      extra: { env: { FAKE_CLAUDE_PID_FILE: pidFile, FAKE_CLAUDE_LOG: log } },
    });
    const texts: string[] = [];
    const running = proc.runTurn("hello", { onText: (text) => texts.push(text) });
    await waitFor(() => texts.length >= 1);
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    expect(isAlive(grandchild)).toBe(true);
    const childPid = proc.pid as number;
    await proc.stop();
    expect((await running).subtype).toBe("process_stopped");
    expect(proc.alive()).toBe(false);
    expect(isAlive(childPid)).toBe(false);
    // It heard the SIGTERM and stayed: what ended it was the SIGKILL after the grace.
    expect(readLog(log).some((entry) => entry.event === "sigterm_ignored")).toBe(true);
    await waitFor(() => !isAlive(grandchild));
  });

  it("builds the argv with binArgs before the stream-json flags", () => {
    const proc = new ClaudeProcess("argv", {
      claudeBin: "/usr/bin/node",
      binArgs: ["cli.js", "run"],
      model: "m",
      permissionMode: "acceptEdits",
      allowedTools: ["Bash", "Read"],
      extraArgs: ["--max-turns", "3"],
    });
    expect(proc.buildCommand()).toEqual([
      "/usr/bin/node",
      "cli.js",
      "run",
      "-p",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--verbose",
      "--model",
      "m",
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      "Bash,Read",
      "--max-turns",
      "3",
    ]);
  });

  it("removes CLAUDECODE and passes maxRetries to the child", async () => {
    const logPath = join(scratch, "env.log");
    const previous = process.env.CLAUDECODE;
    process.env.CLAUDECODE = "1";
    try {
      const proc = makeProc("normal", {
        extra: { maxRetries: 0, env: { FAKE_CLAUDE_LOG: logPath } },
      });
      await proc.runTurn("hello");
    } finally {
      if (previous === undefined) delete process.env.CLAUDECODE;
      else process.env.CLAUDECODE = previous;
    }
    const start = readLog(logPath).find((entry) => entry.event === "start");
    expect(start?.env).toEqual({ CLAUDECODE: null, CLAUDE_CODE_MAX_RETRIES: "0" });
    expect(start?.args).toEqual(
      expect.arrayContaining(["-p", "--verbose", "--input-format", "stream-json"]),
    );
  });

  it("killLiveChildren ends an agent nobody stopped (each test file's end calls it)", async () => {
    const proc = makeProc("timeout");
    const running = proc.runTurn("hang");
    await waitFor(() => proc.sessionId !== null);
    const childPid = proc.pid as number;
    expect(isAlive(childPid)).toBe(true);
    expect(killLiveChildren()).toBeGreaterThanOrEqual(1);
    expect((await running).isError).toBe(true);
    await waitFor(() => !isAlive(childPid));
  });

  it("kills live children when the host process exits without stopping them", async () => {
    const script = join(scratch, "host.ts");
    const module = join(import.meta.dirname, "..", "..", "src", "claude-cli", "claude-process.ts");
    writeFileSync(
      script,
      `import { ClaudeProcess } from ${JSON.stringify(module)};
const proc = new ClaudeProcess("exit", { claudeBin: ${JSON.stringify(FAKE_CLAUDE)}, env: { FAKE_CLAUDE_SCENARIO: "timeout" } });
void proc.runTurn("hang");
const timer = setInterval(() => {
  if (proc.sessionId) { console.log(proc.pid); clearInterval(timer); process.exit(0); }
}, 10);
`,
    );
    const host = await runProcess(process.execPath, ["--import", "tsx", script]);
    expect(host.code, host.stderr).toBe(0);
    const childPid = Number(host.stdout.trim());
    expect(childPid).toBeGreaterThan(0);
    await waitFor(() => !isAlive(childPid));
  });
});

describe("permissions over the control channel", () => {
  it("allows with the handler's decision", async () => {
    const requests: string[] = [];
    const proc = makeProc("permission", {
      extra: {
        onPermissionRequest: (request) => {
          requests.push(request.toolName);
          return { behavior: "allow" };
        },
      },
    });
    expect(proc.buildCommand()).toEqual(
      expect.arrayContaining(["--permission-prompt-tool", "stdio"]),
    );
    const result = await proc.runTurn("touch it");
    expect(requests).toEqual(["Bash"]);
    expect(result.result).toBe('permission: allow {"command":"touch made-by-tool"}');
  });

  it("denies with the handler's reason", async () => {
    const proc = makeProc("permission", {
      extra: { onPermissionRequest: () => ({ behavior: "deny", message: "not on my watch" }) },
    });
    const result = await proc.runTurn("touch it");
    expect(result.result).toBe("permission: deny not on my watch");
  });

  it("denies with a reason when the handler throws or is missing", async () => {
    const throwing = makeProc("permission", {
      extra: {
        onPermissionRequest: () => {
          throw new Error("database down");
        },
      },
    });
    expect((await throwing.runTurn("x")).result).toContain(
      "deny Denied: the permission check failed",
    );
    const missing = makeProc("permission", {
      extra: { extraArgs: ["--permission-prompt-tool", "stdio"] },
    });
    expect((await missing.runTurn("x")).result).toContain("no permission handler");
  });
});

describe("interrupt, resume, and older dialects", () => {
  it("interrupt ends the turn in flight", async () => {
    const proc = makeProc("interrupt");
    const texts: string[] = [];
    const running = proc.runTurn("slow work", { onText: (text) => texts.push(text) });
    await waitFor(() => texts.length >= 1);
    await proc.interrupt();
    const result = await running;
    expect(result.isError).toBe(true);
    expect(proc.alive()).toBe(true);
  });

  it("an aborted signal interrupts the turn", async () => {
    const proc = makeProc("interrupt");
    const controller = new AbortController();
    const texts: string[] = [];
    const running = proc.runTurn("slow work", {
      signal: controller.signal,
      onText: (text) => {
        texts.push(text);
        controller.abort();
      },
    });
    const result = await running;
    expect(texts).toHaveLength(1);
    expect(result.isError).toBe(true);
    expect(proc.alive()).toBe(true);
  });

  it("starts a fresh session once when --resume names an unknown session", async () => {
    const logPath = join(scratch, "resume.log");
    const proc = makeProc("resume_missing", {
      sessionIdEnv: "",
      extra: { env: { FAKE_CLAUDE_LOG: logPath } },
    });
    await proc.runTurn("first");
    const firstSession = proc.sessionId;
    expect(firstSession).toBeTruthy();
    await proc.stop();

    const result = await proc.runTurn("second");
    expect(result.isError).toBe(false);
    expect(result.result).toContain("could not be resumed");
    expect(result.result).toContain("second");
    expect(proc.sessionId).not.toBe(firstSession);
    const starts = readLog(logPath).filter((entry) => entry.event === "start");
    expect(starts.map((entry) => (entry.args as string[]).includes("--resume"))).toEqual([
      false,
      true,
      false,
    ]);
  });

  it("counts results when the CLI prints no command_lifecycle lines", async () => {
    const proc = makeProc("no_lifecycle");
    expect((await proc.runTurn("one")).result).toContain("one");
    const outcome = await proc.steer("two");
    expect(outcome.status).toBe("ran_as_turn");
    expect(outcome.turn?.result).toContain("two");
  });

  it("refuses a second concurrent runTurn", async () => {
    const proc = makeProc("timeout");
    const running = proc.runTurn("first", { timeoutMs: 60_000 }).catch(() => undefined);
    await expect(proc.runTurn("second")).rejects.toThrow(/already in flight/);
    await proc.stop();
    await running;
  });
});

describe("RunnerRegistry with real processes", () => {
  it("a reaped channel's next process resumes the same session", async () => {
    const registry = new RunnerRegistry({
      maxLive: 1,
      idleMinutes: 1,
      processOptions: {
        claudeBin: FAKE_CLAUDE,
        env: { FAKE_CLAUDE_SCENARIO: "normal", FAKE_CLAUDE_SESSION_ID: "kept-session" },
      },
    });
    const first = registry.get("channel-a")!;
    await first.runTurn("hello");
    first.lastActive = performance.now() - 3_600_000;
    expect(await registry.reapOnce()).toBe(1);
    expect(first.alive()).toBe(false);

    const second = registry.get("channel-a")!;
    expect(second).not.toBe(first);
    expect(second.buildCommand()).toEqual(expect.arrayContaining(["--resume", "kept-session"]));
    await registry.close();
  });

  it("a new process resumes the session the caller names, and entries lists it", async () => {
    const registry = new RunnerRegistry({
      maxLive: 2,
      idleMinutes: 20,
      processOptions: { claudeBin: FAKE_CLAUDE },
    });
    const proc = registry.get("channel-a", { sessionId: "stored-session" })!;
    expect(proc.sessionId).toBe("stored-session");
    expect(proc.buildCommand()).toEqual(expect.arrayContaining(["--resume", "stored-session"]));
    expect(registry.get("channel-a", { sessionId: "other" })).toBe(proc);
    expect(registry.entries()).toEqual([["channel-a", proc]]);
    await registry.close();
  });

  it("takes per-channel process options", () => {
    const registry = new RunnerRegistry({
      maxLive: 2,
      idleMinutes: 20,
      processOptions: (channelId) => ({ claudeBin: FAKE_CLAUDE, cwd: `/srv/${channelId}` }),
    });
    expect(registry.get("one")?.options.cwd).toBe("/srv/one");
    expect(registry.get("two")?.options.cwd).toBe("/srv/two");
    void registry.close();
  });

  it("stop(channel) ends that process and frees its slot for another channel", async () => {
    const registry = new RunnerRegistry({
      maxLive: 1,
      idleMinutes: 20,
      processOptions: { claudeBin: FAKE_CLAUDE, env: { FAKE_CLAUDE_SCENARIO: "normal" } },
    });
    const first = registry.get("channel-a")!;
    await first.runTurn("hello");
    expect(registry.get("channel-b")).toBeNull();
    expect(await registry.stop("channel-a")).toBe(true);
    expect(first.alive()).toBe(false);
    expect(registry.liveCount()).toBe(0);
    expect(registry.get("channel-b")).not.toBeNull();
    expect(await registry.stop("nobody")).toBe(false);
    await registry.close();
  });
});
