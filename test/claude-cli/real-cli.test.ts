/**
 * Integration against the real Claude Code CLI (@anthropic-ai/claude-code@2.1.328, installed
 * into .cache/ by scripts/install-claude-code.sh), pointed at the loopback fake Messages API.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ClaudeProcess, type ClaudeProcessOptions } from "../../src/claude-cli/claude-process.js";
import { ClaudeTimeoutError, RateLimitError } from "../../src/claude-cli/errors.js";
import { listDescendants } from "../../src/claude-cli/process-tree.js";
import { RunnerRegistry } from "../../src/claude-cli/runner-registry.js";
import {
  echoFallback,
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
  type ScriptStep,
  startFakeMessagesApi,
} from "../fixtures/fake-messages-api.js";
import { pidAlive, waitUntil } from "./helpers.js";

const repositoryRoot = join(import.meta.dirname, "..", "..");
let claudeBin = "";
const scratch = mkdtempSync(join(tmpdir(), "rudder-real-cli-"));
const cleanups: (() => Promise<void>)[] = [];

beforeAll(() => {
  claudeBin = execFileSync(
    "bash",
    [join(repositoryRoot, "scripts", "install-claude-code.sh"), "--print-path"],
    {
      encoding: "utf8",
    },
  ).trim();
}, 300_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

interface Setup {
  api: FakeMessagesApi;
  workspace: string;
  options: ClaudeProcessOptions;
  make(extra?: Partial<ClaudeProcessOptions>): ClaudeProcess;
}

let setupCount = 0;

/** A fake API with `script`, a fresh HOME and workspace, and a factory of real-CLI processes. */
async function setup(script: ScriptStep[]): Promise<Setup> {
  const api = await startFakeMessagesApi({ script, fallback: echoFallback });
  cleanups.push(() => api.close());
  setupCount += 1;
  const root = join(scratch, `case-${setupCount}`);
  const home = join(root, "home");
  const temporary = join(root, "tmp");
  const workspace = join(root, "workspace");
  for (const directory of [home, temporary, workspace]) mkdirSync(directory, { recursive: true });
  const options: ClaudeProcessOptions = {
    claudeBin,
    model: "claude-sonnet-4-5",
    cwd: workspace,
    maxRetries: 0,
    terminateGraceMs: 3000,
    env: {
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "dummy",
      ANTHROPIC_AUTH_TOKEN: undefined,
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      IS_SANDBOX: "1",
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, ".claude"),
      TMPDIR: temporary,
      CLAUDE_CODE_TMPDIR: temporary,
    },
  };
  const make = (extra: Partial<ClaudeProcessOptions> = {}) => {
    const proc = new ClaudeProcess(`real-${setupCount}`, { ...options, ...extra });
    cleanups.push(() => proc.stop());
    return proc;
  };
  return { api, workspace, options, make };
}

const bypass = { permissionMode: "bypassPermissions" };
const sleepTool = (seconds: number): ScriptStep => ({
  toolUse: { name: "Bash", input: { command: `sleep ${seconds}`, description: "wait" } },
});
const TURN = { timeoutMs: 60_000 };
const LONG_TOOL = `node -e "setInterval(() => {}, 1000)" # rudder-long-tool`;

describe("the real Claude Code CLI", () => {
  it("runs a turn", async () => {
    const { api, make } = await setup([{ text: "hello from the fake model" }]);
    const proc = make(bypass);
    const texts: string[] = [];
    const result = await proc.runTurn("say hello", { ...TURN, onText: (text) => texts.push(text) });
    expect(result.isError).toBe(false);
    expect(result.subtype).toBe("success");
    expect(result.result).toBe("hello from the fake model");
    expect(result.numTurns).toBe(1);
    expect(texts).toEqual(["hello from the fake model"]);
    expect(result.sessionId).toBe(proc.sessionId);
    expect(lastUserText(api.mainRequests()[0]!)).toContain("[EXTERNAL CONTENT]\nsay hello");
    expect(proc.alive()).toBe(true);
  });

  it("folds a steer written during a tool run into the same turn", async () => {
    const { api, make } = await setup([
      sleepTool(2),
      // The CLI delivers a steer folded into a turn inside the next tool result.
      {
        reply: (request) => ({
          text: `answered: ${JSON.stringify(lastToolResults(request)).includes("also mention the steer") ? "the steer too" : "the tool only"}`,
        }),
      },
    ]);
    const proc = make(bypass);
    let steered: Promise<unknown> | undefined;
    const result = await proc.runTurn("start the tool", {
      ...TURN,
      onEvent: (event) => {
        if (event.type === "assistant" && JSON.stringify(event).includes('"tool_use"')) {
          steered ??= proc.steer("also mention the steer");
        }
      },
    });
    expect(await steered).toEqual({ status: "steered", turn: undefined });
    expect(result.isError).toBe(false);
    expect(result.numTurns).toBe(2);
    expect(result.result).toContain("answered:");
    expect(result.result).toBe("answered: the steer too");
    expect(api.mainRequests()).toHaveLength(2);
  });

  it("holds a turn until a steer written while the model streams is answered", async () => {
    const { api, make } = await setup([
      { text: "a slow first answer", chunks: 6, chunkDelayMs: 250 },
    ]);
    const proc = make(bypass);
    const running = proc.runTurn("first question", TURN);
    await api.waitForMainRequests(1, 30_000);
    const outcome = await proc.steer("second question");
    const result = await running;
    expect(outcome.status).toBe("steered");
    expect(result.isError).toBe(false);
    expect(result.result).toContain("a slow first answer");
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
    const proc = make(bypass);
    expect((await proc.runTurn("remember the word giraffe", TURN)).result).toBe("noted: giraffe");
    const sessionId = proc.sessionId;
    const hungPid = proc.pid;

    await expect(proc.runTurn("this will hang", { timeoutMs: 3000 })).rejects.toBeInstanceOf(
      ClaudeTimeoutError,
    );
    expect(proc.alive()).toBe(false);
    expect(pidAlive(hungPid!)).toBe(false);
    expect(proc.buildCommand()).toEqual(expect.arrayContaining(["--resume", sessionId]));

    const result = await proc.runTurn("what was the word?", TURN);
    expect(result.isError).toBe(false);
    expect(result.result).toContain("what was the word?");
    expect(proc.sessionId).toBe(sessionId);
    const history = JSON.stringify(api.mainRequests().at(-1)?.body.messages);
    expect(history).toContain("remember the word giraffe");
    expect(history).toContain("noted: giraffe");
  });

  it("turns a 429 into RateLimitError without minutes of retries", async () => {
    const { make } = await setup([
      { error: { status: 429, type: "rate_limit_error", message: "slow down" } },
    ]);
    const proc = make(bypass);
    // A retrying CLI would run into this timeout and throw ClaudeTimeoutError instead.
    const error = await proc.runTurn("hi", { timeoutMs: 20_000 }).catch((caught) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(String(error)).toContain("429");
  });

  it("answers can_use_tool through onPermissionRequest: allow", async () => {
    const { api, workspace, make } = await setup([
      { toolUse: { name: "Bash", input: { command: "touch allowed-file", description: "touch" } } },
      { text: "done" },
    ]);
    const asked: string[] = [];
    const proc = make({
      onPermissionRequest: (request) => {
        asked.push(`${request.toolName}: ${String(request.input.command)}`);
        return { behavior: "allow" };
      },
    });
    const result = await proc.runTurn("make a file", TURN);
    expect(result.result).toBe("done");
    expect(asked).toEqual(["Bash: touch allowed-file"]);
    expect(existsSync(join(workspace, "allowed-file"))).toBe(true);
    expect(lastToolResults(api.mainRequests()[1]!)[0]?.is_error).toBeFalsy();
  });

  it("answers can_use_tool through onPermissionRequest: deny", async () => {
    const { api, workspace, make } = await setup([
      { toolUse: { name: "Bash", input: { command: "touch denied-file", description: "touch" } } },
      { text: "understood" },
    ]);
    const proc = make({
      onPermissionRequest: () => ({ behavior: "deny", message: "not in this channel" }),
    });
    const result = await proc.runTurn("make a file", TURN);
    expect(result.result).toBe("understood");
    expect(existsSync(join(workspace, "denied-file"))).toBe(false);
    const toolResult = lastToolResults(api.mainRequests()[1]!)[0];
    expect(toolResult?.is_error).toBe(true);
    expect(JSON.stringify(toolResult?.content)).toContain("not in this channel");
  });

  it("interrupts a turn in flight", async () => {
    const { api, make } = await setup([{ hangUntilAborted: true, text: "working" }]);
    const proc = make(bypass);
    const running = proc.runTurn("take your time", TURN);
    await api.waitForMainRequests(1, 30_000);
    await proc.interrupt();
    const result = await running;
    // The CLI ends an interrupted turn with an error result and keeps the process.
    expect(result.isError).toBe(true);
    expect(result.subtype).toBe("error_during_execution");
    expect(proc.alive()).toBe(true);

    const after = await proc.runTurn("still there?", TURN);
    expect(after.result).toContain("still there?");
  });

  it("answers a steer queued behind an interrupted turn in the same turn", async () => {
    const { api, make } = await setup([{ hangUntilAborted: true, text: "working" }]);
    const proc = make(bypass);
    const running = proc.runTurn("take your time", TURN);
    await api.waitForMainRequests(1, 30_000);
    expect((await proc.steer("the queued steer")).status).toBe("steered");
    await proc.interrupt();
    const result = await running;
    // The CLI cancels the interrupted message but still runs the queued one as the next turn.
    expect(result.result).toContain("the queued steer");
    expect(proc.popPendingSteers()).toEqual([]);
  });

  it("starts a new session once when the resumed one is gone", async () => {
    const { options, make } = await setup([{ text: "first answer" }]);
    const proc = make(bypass);
    await proc.runTurn("first", TURN);
    const lostSession = proc.sessionId;
    await proc.stop();
    rmSync(join(options.env!.CLAUDE_CONFIG_DIR!, "projects"), { recursive: true, force: true });

    const result = await proc.runTurn("second", TURN);
    expect(result.isError).toBe(false);
    expect(result.result).toContain(`${lostSession} could not be resumed`);
    expect(result.result).toContain("second");
    expect(proc.sessionId).not.toBe(lostSession);
    expect(proc.buildCommand()).toEqual(expect.arrayContaining(["--resume", proc.sessionId]));
  });

  it("stopAll leaves no process behind, Bash tools included", async () => {
    const { options } = await setup([
      { toolUse: { name: "Bash", input: { command: LONG_TOOL, description: "long tool" } } },
    ]);
    const registry = new RunnerRegistry({
      maxLive: 2,
      idleMinutes: 20,
      processOptions: { ...options, ...bypass },
    });
    cleanups.push(() => registry.close());
    const proc = registry.get("stop-all")!;
    const running = proc.runTurn("run a long tool", TURN);
    await waitUntil(() => proc.pid !== undefined && hasLongTool(proc.pid), 30_000);
    const pids = [proc.pid!, ...listDescendants(proc.pid!).map((entry) => entry.pid)];
    // The CLI runs each Bash tool in a session of its own, out of reach of a group signal.
    expect(pids.some((pid) => sessionOf(pid) !== sessionOf(proc.pid!))).toBe(true);
    await registry.stopAll();
    expect((await running).subtype).toBe("process_stopped");
    expect(registry.liveCount()).toBe(0);
    await waitUntil(() => pids.every((pid) => !pidAlive(pid)), 10_000);
  });
});

function sessionOf(pid: number): string | undefined {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3];
}

function hasLongTool(pid: number): boolean {
  return listDescendants(pid).some((entry) => {
    try {
      return readFileSync(`/proc/${entry.pid}/cmdline`, "utf8").includes("setInterval");
    } catch {
      return false;
    }
  });
}
