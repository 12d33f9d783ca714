/**
 * `ClaudeProcess` with `rudder` as its binary: the runner tests the real Claude Code CLI
 * passes (test/claude-cli/real-cli.test.ts), wherever the behaviour is not Claude's own,
 * against the loopback fake Messages API. rudder runs through test/fixtures/rudder-bin,
 * which execs the built dist/cli.js.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeProcess, type ClaudeProcessOptions } from "../../src/claude-cli/claude-process.js";
import { ClaudeTimeoutError, RateLimitError } from "../../src/claude-cli/errors.js";
import { RunnerRegistry } from "../../src/claude-cli/runner-registry.js";
import {
  echoFallback,
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../fixtures/fake-messages-api.js";
import {
  makeSandbox,
  pidAlive,
  RUDDER_BIN,
  type Sandbox,
  waitUntil,
  writeSettings,
} from "./helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  api: FakeMessagesApi;
  sandbox: Sandbox;
  options: ClaudeProcessOptions;
  make(extra?: Partial<ClaudeProcessOptions>): ClaudeProcess;
}

async function setup(script: ScriptStep[]): Promise<Setup> {
  const api = await startFakeMessagesApi({ script, fallback: echoFallback });
  cleanups.push(() => api.close());
  const sandbox = makeSandbox(api.url);
  cleanups.push(() => sandbox.cleanup());
  const options: ClaudeProcessOptions = {
    claudeBin: RUDDER_BIN,
    cwd: sandbox.workspace,
    maxRetries: 0,
    terminateGraceMs: 3000,
    env: { ...sandbox.env, ANTHROPIC_AUTH_TOKEN: undefined, RUDDER_MAX_RETRIES: undefined },
  };
  let count = 0;
  const make = (extra: Partial<ClaudeProcessOptions> = {}) => {
    count += 1;
    const proc = new ClaudeProcess(`rudder-${count}`, { ...options, ...extra });
    cleanups.push(() => proc.stop());
    return proc;
  };
  return { api, sandbox, options, make };
}

const TURN = { timeoutMs: 30_000 };

function mainRequest(api: FakeMessagesApi, index: number): RecordedRequest {
  const request = api.mainRequests()[index];
  if (request === undefined) throw new Error(`no main request ${index}`);
  return request;
}
const waitForGo = "while [ ! -f go ]; do sleep 0.02; done";
const askForTouch = { permissions: { ask: ["Bash(touch:*)"] } };

describe("ClaudeProcess drives rudder", () => {
  it("runs a turn", async () => {
    const { api, make } = await setup([{ text: "hello from the fake model" }]);
    const proc = make();
    const texts: string[] = [];
    const result = await proc.runTurn("say hello", { ...TURN, onText: (text) => texts.push(text) });
    expect(result).toMatchObject({ isError: false, subtype: "success", numTurns: 1 });
    expect(result.result).toBe("hello from the fake model");
    expect(texts).toEqual(["hello from the fake model"]);
    expect(result.sessionId).toBe(proc.sessionId);
    expect(proc.buildCommand()[0]).toBe(RUDDER_BIN);
    expect(lastUserText(mainRequest(api, 0))).toContain("[EXTERNAL CONTENT]\nsay hello");
    expect(proc.alive()).toBe(true);
  });

  it("folds a steer written during a tool run into the same turn", async () => {
    const { api, sandbox, make } = await setup([
      { toolUse: { name: "bash", input: { command: waitForGo } } },
      {
        reply: (request) => ({
          text: lastUserText(request).includes("also mention the steer")
            ? "the steer too"
            : "the tool only",
        }),
      },
    ]);
    const proc = make();
    let steered: Promise<unknown> | undefined;
    const running = proc.runTurn("start the tool", {
      ...TURN,
      onEvent: (event) => {
        if (event.type === "assistant") steered ??= proc.steer("also mention the steer");
      },
    });
    await waitUntil(() => steered !== undefined);
    expect(await steered).toEqual({ status: "steered", turn: undefined });
    writeFileSync(join(sandbox.workspace, "go"), "");
    const result = await running;
    expect(result).toMatchObject({ isError: false, numTurns: 2, result: "the steer too" });
    expect(api.mainRequests()).toHaveLength(2);
  });

  it("folds a steer written while the model streams, and the next turn gets its own answer", async () => {
    const { api, make } = await setup([
      { text: "a slow first answer", chunks: 6, chunkDelayMs: 100 },
    ]);
    const proc = make();
    const running = proc.runTurn("first question", TURN);
    await api.waitForMainRequests(1);
    const outcome = await proc.steer("second question");
    const result = await running;
    expect(outcome.status).toBe("steered");
    expect(result.isError).toBe(false);
    // rudder answers the steer in the running turn (Claude Code queues it as a second result).
    expect(result.result).toContain("second question");
    expect(result.numTurns).toBe(2);

    const next = await proc.runTurn("third question", TURN);
    expect(next.result).toContain("third question");
    expect(next.result).not.toContain("second question");
  });

  it("times out, then resumes the session with its history", async () => {
    const { api, make } = await setup([
      { text: "noted: giraffe" },
      { hangUntilAborted: true, text: "thinking" },
    ]);
    const proc = make();
    expect((await proc.runTurn("remember the word giraffe", TURN)).result).toBe("noted: giraffe");
    const sessionId = proc.sessionId;
    const hungPid = proc.pid;

    await expect(proc.runTurn("this will hang", { timeoutMs: 3000 })).rejects.toBeInstanceOf(
      ClaudeTimeoutError,
    );
    expect(proc.alive()).toBe(false);
    expect(pidAlive(hungPid as number)).toBe(false);
    expect(proc.buildCommand()).toEqual(expect.arrayContaining(["--resume", sessionId]));

    const result = await proc.runTurn("what was the word?", TURN);
    expect(result.isError).toBe(false);
    expect(result.result).toContain("what was the word?");
    expect(proc.sessionId).toBe(sessionId);
    const history = JSON.stringify(api.mainRequests().at(-1)?.body.messages);
    expect(history).toContain("remember the word giraffe");
    expect(history).toContain("noted: giraffe");
  });

  it("turns a 429 into RateLimitError without retries", async () => {
    const { make } = await setup([
      { error: { status: 429, type: "rate_limit_error", message: "slow down" } },
    ]);
    const proc = make();
    const error = await proc
      .runTurn("hi", { timeoutMs: 20_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
  });

  it("answers can_use_tool through onPermissionRequest: allow and deny", async () => {
    const { api, sandbox, make } = await setup([
      { toolUse: { name: "bash", input: { command: "touch allowed-file" } } },
      { toolUse: { name: "bash", input: { command: "touch denied-file" } } },
      { text: "done" },
    ]);
    writeSettings(sandbox.workspace, askForTouch);
    const asked: string[] = [];
    const proc = make({
      onPermissionRequest: (request) => {
        const command = String(request.input.command);
        asked.push(`${request.toolName}: ${command}`);
        return command.includes("allowed")
          ? { behavior: "allow" }
          : { behavior: "deny", message: "not in this channel" };
      },
    });
    const result = await proc.runTurn("make files", TURN);
    expect(result.result).toBe("done");
    expect(asked).toEqual(["bash: touch allowed-file", "bash: touch denied-file"]);
    expect(existsSync(join(sandbox.workspace, "allowed-file"))).toBe(true);
    expect(existsSync(join(sandbox.workspace, "denied-file"))).toBe(false);
    expect(lastToolResults(mainRequest(api, 2))[0]?.is_error).toBe(true);
  });

  it("interrupts a turn in flight and keeps the process", async () => {
    const { api, make } = await setup([{ hangUntilAborted: true, text: "working" }]);
    const proc = make();
    const running = proc.runTurn("take your time", TURN);
    await api.waitForMainRequests(1);
    await proc.interrupt();
    const result = await running;
    expect(result.isError).toBe(true);
    expect(proc.alive()).toBe(true);
    const after = await proc.runTurn("still there?", TURN);
    expect(after.result).toContain("still there?");
  });

  it("answers a steer queued behind an interrupted turn", async () => {
    const { api, make } = await setup([{ hangUntilAborted: true, text: "working" }]);
    const proc = make();
    const running = proc.runTurn("take your time", TURN);
    await api.waitForMainRequests(1);
    expect((await proc.steer("the queued steer")).status).toBe("steered");
    await proc.interrupt();
    const result = await running;
    expect(result.result).toContain("the queued steer");
    expect(proc.popPendingSteers()).toEqual([]);
  });

  it("starts a new session once when the resumed one is gone", async () => {
    const { sandbox, make } = await setup([{ text: "first answer" }]);
    const proc = make();
    await proc.runTurn("first", TURN);
    const lostSession = proc.sessionId;
    await proc.stop();
    rmSync(join(sandbox.env.RUDDER_HOME as string, "sessions"), { recursive: true, force: true });

    const result = await proc.runTurn("second", TURN);
    expect(result.isError).toBe(false);
    expect(result.result).toContain(`${lostSession} could not be resumed`);
    expect(result.result).toContain("second");
    expect(proc.sessionId).not.toBe(lostSession);
  });

  it("stopAll leaves no process behind, bash tools included", async () => {
    const { sandbox, options } = await setup([
      { toolUse: { name: "bash", input: { command: "echo $$ > tool.pid; exec sleep 60" } } },
    ]);
    const registry = new RunnerRegistry({ maxLive: 2, idleMinutes: 20, processOptions: options });
    cleanups.push(() => registry.close());
    const proc = registry.get("stop-all") as ClaudeProcess;
    const running = proc.runTurn("run a long tool", TURN);
    const pidFile = join(sandbox.workspace, "tool.pid");
    await waitUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "");
    const pids = [proc.pid as number, Number(readFileSync(pidFile, "utf8"))];
    await registry.stopAll();
    expect((await running).subtype).toBe("process_stopped");
    expect(registry.liveCount()).toBe(0);
    await waitUntil(() => pids.every((pid) => !pidAlive(pid)));
  });
});
