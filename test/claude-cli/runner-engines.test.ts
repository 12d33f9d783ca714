/**
 * The runner scenarios, parameterised over the binaries `ClaudeProcess` can drive:
 * - `claude`: the real Claude Code CLI (@anthropic-ai/claude-code@2.1.328, installed into
 *   .cache/ by scripts/install-claude-code.sh) against the loopback fake Messages API;
 * - `rudder`: rudder's own built CLI (dist/cli.js, through test/fixtures/rudder-bin; run
 *   `npm run build` first) against the same fake API;
 * - `fake`: test/fixtures/fake-claude, which plays a named scenario instead of calling a
 *   model, so it runs only the scenarios whose assertions hold without the API (the rest of the
 *   fake-CLI behaviour is in seed-runner.test.ts and claude-process.test.ts).
 * Where the engines legitimately differ, the engine table says so, field by field.
 *
 * The scenarios that only need a live process of an engine share one (`shared` below): one
 * sandbox, one fake Messages API to which each case adds its own script, one process kept
 * between cases, as a gateway keeps a channel's. Starting Claude Code is most of such a case.
 * A case that fails drops the shared process, so the next one starts from a fresh one.
 */

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { ClaudeProcess } from "../../src/claude-cli/claude-process.js";
import type { ClaudeProcessOptions } from "../../src/claude-cli/claude-process-types.js";
import { ClaudeTimeoutError, RateLimitError } from "../../src/claude-cli/errors.js";
import { listDescendants } from "../../src/claude-cli/process-tree.js";
import { RunnerRegistry } from "../../src/claude-cli/runner-registry.js";
import { claudeCodeBinary } from "../helpers/claude-code-env.js";
import {
  echoFallback,
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { FAKE_CLAUDE, RUDDER_BIN, RUDDER_CLI } from "../helpers/fixtures.js";
import { processesMatching } from "../helpers/process-scan.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import { writeSettings } from "../protocol/helpers.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "rudder-runner-engines-")));

/** One test case's directories; `apiUrl` is empty for the fake CLI, which calls no API. */
interface Sandbox {
  root: string;
  home: string;
  temporary: string;
  workspace: string;
  apiUrl: string;
}

interface Engine {
  name: "claude" | "rudder" | "fake";
  /** Whether the binary calls the fake Messages API (and so plays its script). */
  usesApi: boolean;
  /** Installs or locates the binary; runs once before the engine's scenarios. */
  prepare(): void;
  /** Binary, environment and timeouts of every process of a case. */
  options(sandbox: Sandbox): ClaudeProcessOptions;
  /** Options under which tools run without asking. */
  unattended: Partial<ClaudeProcessOptions>;
  /** The shell tool's name in the model's tool list (both show Claude Code's in stream-json). */
  shellTool: "Bash";
  /** Makes `touch` commands need a permission decision. */
  requirePermission(sandbox: Sandbox): void;
  /** Deletes the stored sessions, so that a `--resume` finds nothing. */
  forgetSessions(sandbox: Sandbox): void;
  /** Where the model reads a steer that was written while a tool ran. */
  steerSeenBy(request: RecordedRequest): string;
  /**
   * How a steer written while the model streams is answered: Claude Code queues it and answers
   * with a second result (which ClaudeProcess joins to the first); rudder folds it into the
   * running turn, whose one result answers the steer.
   */
  steerWhileStreaming: "second result" | "same result";
  /** The result subtype of an interrupted turn, where the engine pins one. */
  interruptedSubtype: string | undefined;
  turnTimeoutMs: number;
}

let claudeBin = "";

const engines: Engine[] = [
  {
    name: "claude",
    usesApi: true,
    prepare() {
      claudeBin = claudeCodeBinary();
    },
    options: (sandbox) => ({
      claudeBin,
      model: "claude-sonnet-4-5",
      cwd: sandbox.workspace,
      maxRetries: 0,
      terminateGraceMs: 3000,
      env: {
        ANTHROPIC_BASE_URL: sandbox.apiUrl,
        ANTHROPIC_API_KEY: "dummy",
        ANTHROPIC_AUTH_TOKEN: undefined,
        DISABLE_TELEMETRY: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        IS_SANDBOX: "1",
        HOME: sandbox.home,
        CLAUDE_CONFIG_DIR: join(sandbox.home, ".claude"),
        TMPDIR: sandbox.temporary,
        CLAUDE_CODE_TMPDIR: sandbox.temporary,
      },
    }),
    unattended: { permissionMode: "bypassPermissions" },
    shellTool: "Bash",
    // The CLI's default permission mode asks before any Bash command that changes files.
    requirePermission: () => {},
    forgetSessions: (sandbox) =>
      rmSync(join(sandbox.home, ".claude", "projects"), { recursive: true, force: true }),
    // The CLI delivers a steer folded into a turn inside the next tool result.
    steerSeenBy: (request) => JSON.stringify(lastToolResults(request)),
    steerWhileStreaming: "second result",
    // The CLI ends an interrupted turn with an error result and keeps the process.
    interruptedSubtype: "error_during_execution",
    turnTimeoutMs: 60_000,
  },
  {
    name: "rudder",
    usesApi: true,
    prepare() {
      if (!existsSync(RUDDER_CLI)) throw new Error(`${RUDDER_CLI} is missing: npm run build`);
    },
    options: (sandbox) => ({
      claudeBin: RUDDER_BIN,
      cwd: sandbox.workspace,
      maxRetries: 0,
      terminateGraceMs: 3000,
      env: {
        PATH: process.env.PATH,
        HOME: sandbox.home,
        RUDDER_HOME: join(sandbox.home, ".rudder"),
        TMPDIR: sandbox.temporary,
        ANTHROPIC_BASE_URL: sandbox.apiUrl,
        ANTHROPIC_API_KEY: "dummy",
        ANTHROPIC_AUTH_TOKEN: undefined,
        // maxRetries reaches rudder as CLAUDE_CODE_MAX_RETRIES, as it reaches Claude Code.
        RUDDER_MAX_RETRIES: undefined,
      },
    }),
    // rudder's default permission mode allows bash unless a settings rule asks.
    unattended: {},
    shellTool: "Bash",
    requirePermission: (sandbox) =>
      writeSettings(sandbox.workspace, { permissions: { ask: ["Bash(touch:*)"] } }),
    forgetSessions: (sandbox) =>
      rmSync(join(sandbox.home, ".rudder", "sessions"), { recursive: true, force: true }),
    // rudder delivers a steer at the next model call, as user text after the tool results.
    steerSeenBy: (request) => lastUserText(request),
    steerWhileStreaming: "same result",
    // Internally an interrupted turn is "aborted"; on the wire it is Claude Code's name.
    interruptedSubtype: "error_during_execution",
    turnTimeoutMs: 30_000,
  },
  {
    name: "fake",
    usesApi: false,
    prepare() {},
    options: (sandbox) => ({
      claudeBin: FAKE_CLAUDE,
      cwd: sandbox.workspace,
      maxRetries: 0,
      terminateGraceMs: 1000,
      env: { FAKE_CLAUDE_SESSION_ID: undefined },
    }),
    unattended: {},
    shellTool: "Bash",
    requirePermission: () => {
      throw new Error("the fake CLI plays permission prompts as a scenario");
    },
    // The `resume_missing` scenario refuses every --resume: there is nothing to delete.
    forgetSessions: () => {},
    steerSeenBy: () => {
      throw new Error("the fake CLI calls no model");
    },
    steerWhileStreaming: "second result",
    interruptedSubtype: "error_during_execution",
    turnTimeoutMs: 15_000,
  },
];

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

interface Case {
  /** The fake Messages API; undefined for the fake CLI. */
  api: FakeMessagesApi | undefined;
  sandbox: Sandbox;
  options: ClaudeProcessOptions;
  make(extra?: Partial<ClaudeProcessOptions>): ClaudeProcess;
}

let caseCount = 0;

/** What the fake CLI plays in place of a script: FAKE_CLAUDE_SCENARIO and more environment. */
interface FakePlay {
  scenario: string;
  env?: Record<string, string>;
}

/**
 * A fresh sandbox and a factory of processes of `engine`: the API engines get a fake Messages
 * API playing `script`, the fake CLI plays `fake`.
 */
async function setup(
  engine: Engine,
  script: ScriptStep[],
  fake?: FakePlay,
  cleanupList = cleanups,
): Promise<Case> {
  caseCount += 1;
  const root = join(scratch, `case-${caseCount}`);
  const sandbox: Sandbox = {
    root,
    home: join(root, "home"),
    temporary: join(root, "tmp"),
    workspace: join(root, "workspace"),
    apiUrl: "",
  };
  for (const directory of [sandbox.home, sandbox.temporary, sandbox.workspace]) {
    mkdirSync(directory, { recursive: true });
  }
  cleanupList.push(() => rmSync(root, { recursive: true, force: true }));
  let api: FakeMessagesApi | undefined;
  let played: Record<string, string> = {};
  if (!engine.usesApi) {
    if (fake === undefined) throw new Error("no scenario for the fake CLI");
    played = { FAKE_CLAUDE_SCENARIO: fake.scenario, ...fake.env };
  } else {
    const started = await startFakeMessagesApi({ script, fallback: echoFallback });
    api = started;
    cleanupList.push(() => started.close());
    sandbox.apiUrl = started.url;
  }
  const base = engine.options(sandbox);
  const options: ClaudeProcessOptions = {
    ...base,
    env: { ...base.env, ...played },
  };
  let processCount = 0;
  const make = (extra: Partial<ClaudeProcessOptions> = {}) => {
    processCount += 1;
    const proc = new ClaudeProcess(`${engine.name}-${caseCount}-${processCount}`, {
      ...options,
      ...extra,
    });
    cleanupList.push(() => proc.stop());
    return proc;
  };
  return { api, sandbox, options, make };
}

/** The case's API; the scenarios that call this run only on engines that use one. */
function apiOf(testCase: Case): FakeMessagesApi {
  if (testCase.api === undefined) throw new Error("this engine calls no API");
  return testCase.api;
}

function mainRequest(api: FakeMessagesApi, index: number): RecordedRequest {
  const request = api.mainRequests()[index];
  if (request === undefined) throw new Error(`no main request ${index}`);
  return request;
}

/** A script step in which the model runs `command` with the engine's shell tool. */
function shellStep(engine: Engine, command: string): ScriptStep {
  const input = engine.shellTool === "Bash" ? { command, description: "run" } : { command };
  return { toolUse: { name: engine.shellTool, input } };
}

/** The session id of a process, from /proc/<pid>/stat. */
function sessionOf(pid: number): string | undefined {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3];
}

/** How many distinct input messages the binary reported queued (command_lifecycle). */
function queuedMessages(events: Record<string, unknown>[]): number {
  const uuids = new Set<unknown>();
  for (const event of events) {
    if (event.type === "command_lifecycle" && event.state === "queued") {
      uuids.add(event.command_uuid);
    }
  }
  return uuids.size;
}

const waitForGo = "while [ ! -f go ]; do sleep 0.02; done";
const API_WAIT_MS = 30_000;

/** Whether a session transcript (`.jsonl`) anywhere under `home` holds `text`. */
function transcriptsHolding(home: string, text: string): boolean {
  const files = readdirSync(home, { recursive: true, encoding: "utf8" }).filter((name) =>
    name.endsWith(".jsonl"),
  );
  return files.some((name) => readFileSync(join(home, name), "utf8").includes(text));
}

/** A gate a case opens itself: `open()` settles `opened`. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** An engine's process that several cases share, and where its API's requests stood. */
interface SharedTurn {
  testCase: Case;
  api: FakeMessagesApi;
  proc: ClaudeProcess;
  /** The main requests of this case: those after the ones earlier cases made. */
  requests(): RecordedRequest[];
  /** Resolves once this case's `count`-th main request has arrived. */
  waitForRequests(count: number): Promise<unknown>;
}

describe.each(engines)("ClaudeProcess drives $name", (engine) => {
  const TURN = { timeoutMs: engine.turnTimeoutMs };
  const onApi = it.runIf(engine.usesApi);

  beforeAll(() => engine.prepare(), 300_000);

  const sharedCleanups: (() => Promise<void> | void)[] = [];
  let shared: { testCase: Case; proc: ClaudeProcess } | undefined;
  const dropShared = async () => {
    shared = undefined;
    for (const cleanup of sharedCleanups.splice(0).reverse()) await cleanup();
  };
  afterAll(dropShared);

  /** The engine's shared process (started by its first turn), with `script` added for this case. */
  async function sharedTurn(script: ScriptStep[]): Promise<SharedTurn> {
    if (shared === undefined) {
      const testCase = await setup(engine, [], undefined, sharedCleanups);
      shared = { testCase, proc: testCase.make(engine.unattended) };
    }
    onTestFailed(dropShared);
    const { testCase, proc } = shared;
    const api = apiOf(testCase);
    expect(api.pending()).toBe(0);
    api.push(...script);
    const before = api.mainRequests().length;
    return {
      testCase,
      api,
      proc,
      requests: () => api.mainRequests().slice(before),
      waitForRequests: (count) => api.waitForMainRequests(before + count, API_WAIT_MS),
    };
  }

  onApi("runs a turn", async () => {
    const { testCase, proc, requests } = await sharedTurn([{ text: "hello from the fake model" }]);
    const texts: string[] = [];
    const result = await proc.runTurn("say hello", { ...TURN, onText: (text) => texts.push(text) });
    expect(result).toMatchObject({ isError: false, subtype: "success", numTurns: 1 });
    expect(result.result).toBe("hello from the fake model");
    expect(texts).toEqual(["hello from the fake model"]);
    expect(result.sessionId).toBe(proc.sessionId);
    expect(proc.buildCommand()[0]).toBe(testCase.options.claudeBin);
    expect(lastUserText(requests()[0] as RecordedRequest)).toContain(
      "[EXTERNAL CONTENT]\nsay hello",
    );
    expect(proc.alive()).toBe(true);
  });

  onApi("folds a steer written during a tool run into the same turn", async () => {
    const { testCase, proc, requests } = await sharedTurn([
      shellStep(engine, waitForGo),
      {
        reply: (request) => ({
          text: `answered: ${engine.steerSeenBy(request).includes("also mention the steer") ? "the steer too" : "the tool only"}`,
        }),
      },
    ]);
    const events: Record<string, unknown>[] = [];
    let steered: Promise<unknown> | undefined;
    const running = proc.runTurn("start the tool", {
      ...TURN,
      onEvent: (event) => {
        events.push(event);
        if (event.type === "assistant" && JSON.stringify(event).includes('"tool_use"')) {
          steered ??= proc.steer("also mention the steer");
        }
      },
    });
    await waitFor(() => steered !== undefined, "the steer", API_WAIT_MS);
    expect(await steered).toEqual({ status: "steered", turn: undefined });
    // The tool ends only once the binary has read the steer, so the steer meets the tool run.
    await waitFor(() => queuedMessages(events) >= 2, "two queued messages", API_WAIT_MS);
    writeFileSync(join(testCase.sandbox.workspace, "go"), "");
    const result = await running;
    expect(result.isError).toBe(false);
    expect(result.numTurns).toBe(2);
    expect(result.result).toContain("answered:");
    expect(result.result).toBe("answered: the steer too");
    expect(requests()).toHaveLength(2);
  });

  onApi("holds a turn until a steer written while the model streams is answered", async () => {
    const streamed = gate();
    const { proc, waitForRequests } = await sharedTurn([
      { text: "a slow first answer", chunks: 6, restAfter: streamed.opened },
    ]);
    const events: Record<string, unknown>[] = [];
    const running = proc.runTurn("first question", {
      ...TURN,
      onEvent: (event) => events.push(event),
    });
    await waitForRequests(1);
    const outcome = await proc.steer("second question");
    // The stream ends only once the binary has read the steer.
    await waitFor(() => queuedMessages(events) >= 2, "two queued messages", API_WAIT_MS);
    streamed.open();
    const result = await running;
    expect(outcome.status).toBe("steered");
    expect(result.isError).toBe(false);
    if (engine.steerWhileStreaming === "second result") {
      // The first answer arrives as a result of its own, joined to the steer's.
      expect(result.result).toContain("a slow first answer");
    }
    expect(result.result).toContain("second question");
    expect(result.numTurns).toBe(2);

    const next = await proc.runTurn("third question", TURN);
    expect(next.result).toContain("third question");
    expect(next.result).not.toContain("second question");
  });

  onApi("hands a message its own answer before the turn ends (onAnswered)", async () => {
    const streamed = gate();
    const { proc, waitForRequests } = await sharedTurn([
      { text: "a slow first answer", chunks: 6, restAfter: streamed.opened },
    ]);
    const early: string[] = [];
    const events: Record<string, unknown>[] = [];
    const running = proc.runTurn("first question", {
      ...TURN,
      onEvent: (event) => events.push(event),
      onAnswered: (answer) => early.push(answer.result),
    });
    await waitForRequests(1);
    const outcome = await proc.steer("second question", {
      onAnswered: (answer) => early.push(`steer: ${answer.result}`),
    });
    await waitFor(() => queuedMessages(events) >= 2, "two queued messages", API_WAIT_MS);
    streamed.open();
    const result = await running;
    expect(outcome.status).toBe("steered");
    expect(result.isError).toBe(false);
    expect(result.result).toContain("second question");
    if (engine.steerWhileStreaming === "second result") {
      // The first question's result went to it alone; the turn's result is the second's.
      expect(early).toEqual(["a slow first answer"]);
      expect(result.result).not.toContain("a slow first answer");
      expect(result.numTurns).toBe(1);
    } else {
      // One result answers both: nothing to hand out early.
      expect(early).toEqual([]);
      expect(result.numTurns).toBe(2);
    }
  });

  onApi("times out, then resumes the session with its history", async () => {
    const { proc, requests } = await sharedTurn([
      { text: "noted: giraffe" },
      { hangUntilAborted: true, text: "thinking" },
    ]);
    expect((await proc.runTurn("remember the word giraffe", TURN)).result).toBe("noted: giraffe");
    const sessionId = proc.sessionId;
    const hungPid = proc.pid;

    // The process is up (the first turn ran) and the model hangs until aborted, so any bound
    // times out; a short one spares the wait.
    await expect(proc.runTurn("this will hang", { timeoutMs: 1000 })).rejects.toBeInstanceOf(
      ClaudeTimeoutError,
    );
    expect(proc.alive()).toBe(false);
    expect(isAlive(hungPid as number)).toBe(false);
    expect(proc.buildCommand()).toEqual(expect.arrayContaining(["--resume", sessionId]));

    const result = await proc.runTurn("what was the word?", TURN);
    expect(result.isError).toBe(false);
    expect(result.result).toContain("what was the word?");
    expect(proc.sessionId).toBe(sessionId);
    const history = JSON.stringify(requests().at(-1)?.body.messages);
    expect(history).toContain("remember the word giraffe");
    expect(history).toContain("noted: giraffe");
  });

  onApi("turns a 429 into RateLimitError without retries", async () => {
    const { proc } = await sharedTurn([
      { error: { status: 429, type: "rate_limit_error", message: "slow down" } },
    ]);
    // A retrying binary would run into this timeout and throw ClaudeTimeoutError instead.
    const error = await proc
      .runTurn("hi", { timeoutMs: 20_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(String(error)).toContain("429");
  });

  onApi("answers can_use_tool through onPermissionRequest: allow and deny", async () => {
    const testCase = await setup(engine, [
      shellStep(engine, "touch allowed-file"),
      shellStep(engine, "touch denied-file"),
      { text: "done" },
    ]);
    const api = apiOf(testCase);
    const { workspace } = testCase.sandbox;
    engine.requirePermission(testCase.sandbox);
    const asked: string[] = [];
    const proc = testCase.make({
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
    expect(asked).toEqual([
      `${engine.shellTool}: touch allowed-file`,
      `${engine.shellTool}: touch denied-file`,
    ]);
    expect(existsSync(join(workspace, "allowed-file"))).toBe(true);
    expect(lastToolResults(mainRequest(api, 1))[0]?.is_error).toBeFalsy();
    expect(existsSync(join(workspace, "denied-file"))).toBe(false);
    const denied = lastToolResults(mainRequest(api, 2))[0];
    expect(denied?.is_error).toBe(true);
    expect(JSON.stringify(denied?.content)).toContain("not in this channel");
  });

  onApi("interrupts a turn in flight and keeps the process", async () => {
    const { proc, waitForRequests } = await sharedTurn([
      { hangUntilAborted: true, text: "working" },
    ]);
    const running = proc.runTurn("take your time", TURN);
    await waitForRequests(1);
    await proc.interrupt();
    const result = await running;
    expect(result.isError).toBe(true);
    if (engine.interruptedSubtype !== undefined) {
      expect(result.subtype).toBe(engine.interruptedSubtype);
    }
    expect(proc.alive()).toBe(true);

    const after = await proc.runTurn("still there?", TURN);
    expect(after.result).toContain("still there?");
  });

  onApi("answers a steer queued behind an interrupted turn in the same turn", async () => {
    const { proc, waitForRequests } = await sharedTurn([
      { hangUntilAborted: true, text: "working" },
    ]);
    const running = proc.runTurn("take your time", TURN);
    await waitForRequests(1);
    expect((await proc.steer("the queued steer")).status).toBe("steered");
    await proc.interrupt();
    const result = await running;
    // The interrupted message is cancelled; the queued one still runs, within the same turn.
    expect(result.result).toContain("the queued steer");
    expect(proc.popPendingSteers()).toEqual([]);
  });

  // As the gateway after a SIGKILL: the unanswered message again, to a process resumed on the
  // session that took it in (Claude Code: the session's transcript holds it; rudder: its own).
  onApi(
    "a message delivered again to a session resumed after a SIGKILL is in the prompt once",
    async () => {
      const testCase = await setup(engine, [
        { hangUntilAborted: true, text: "working" },
        { text: "answered once" },
        { text: "answered anew" },
      ]);
      const api = apiOf(testCase);
      const first = testCase.make(engine.unattended);
      const killed = first.runTurn("the redelivered question", TURN);
      await api.waitForMainRequests(1, API_WAIT_MS);
      // The case is a session that already holds the message: its transcript is written a
      // moment after the request goes out, and a kill before that leaves nothing to resume.
      await waitFor(
        () => transcriptsHolding(testCase.sandbox.home, "the redelivered question"),
        "the session's transcript to hold the message",
      );
      process.kill(-(first.pid as number), "SIGKILL");
      expect((await killed).isError).toBe(true);

      const second = testCase.make({
        ...engine.unattended,
        sessionId: first.sessionId ?? undefined,
      });
      const result = await second.runTurn("the redelivered question", TURN);
      expect(result).toMatchObject({ isError: false, result: "answered once" });
      const asked = (index: number) => JSON.stringify(mainRequest(api, index).body.messages);
      expect(asked(1).split("the redelivered question")).toHaveLength(2);
      // Sent anew once that turn is over, it is a new message, as ever.
      await second.runTurn("the redelivered question", TURN);
      expect(asked(2).split("the redelivered question")).toHaveLength(3);
    },
  );

  // The fake CLI's `resume_missing` scenario answers the first turn and refuses every --resume.
  it("starts a new session once when the resumed one is gone", async () => {
    const testCase = await setup(engine, [{ text: "first answer" }], {
      scenario: "resume_missing",
    });
    const proc = testCase.make(engine.unattended);
    await proc.runTurn("first", TURN);
    const lostSession = proc.sessionId;
    expect(lostSession).toBeTruthy();
    await proc.stop();
    engine.forgetSessions(testCase.sandbox);

    const result = await proc.runTurn("second", TURN);
    expect(result.isError).toBe(false);
    expect(result.result).toContain(`${lostSession} could not be resumed`);
    expect(result.result).toContain("second");
    expect(proc.sessionId).not.toBe(lostSession);
    expect(proc.buildCommand()).toEqual(expect.arrayContaining(["--resume", proc.sessionId]));
  });

  // The fake CLI's `ignore_sigterm` scenario starts a detached `sleep` as its tool, writes its
  // pid to FAKE_CLAUDE_PID_FILE and ignores SIGTERM itself.
  it("stopAll leaves no process behind, shell tools included", async () => {
    const testCase = await setup(
      engine,
      [shellStep(engine, "echo $$ > tool.pid; exec sleep 60.104")],
      {
        scenario: "ignore_sigterm",
        env: { FAKE_CLAUDE_PID_FILE: "tool.pid" },
      },
    );
    const registry = new RunnerRegistry({
      maxLive: 2,
      idleMinutes: 20,
      processOptions: { ...testCase.options, ...engine.unattended },
    });
    cleanups.push(() => registry.close());
    const proc = registry.get("stop-all") as ClaudeProcess;
    const running = proc.runTurn("run a long tool", TURN);
    const pidFile = join(testCase.sandbox.workspace, "tool.pid");
    await waitFor(
      () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "",
      "the tool's pid",
      API_WAIT_MS,
    );
    const runnerPid = proc.pid as number;
    // rudder's sandbox gives the command a PID namespace of its own, where `$$` means nothing
    // outside: there the host's /proc names it (and bubblewrap, whose arguments hold it).
    const sandboxed = processesMatching("sleep 60.104");
    const toolPid = sandboxed.at(-1) ?? Number(readFileSync(pidFile, "utf8"));
    const pids = [
      runnerPid,
      toolPid,
      ...sandboxed,
      ...listDescendants(runnerPid).map((entry) => entry.pid),
    ];
    // The tool runs in a session of its own, out of reach of a signal to the runner's group.
    expect(sessionOf(toolPid)).not.toBe(sessionOf(runnerPid));
    await registry.stopAll();
    expect((await running).subtype).toBe("process_stopped");
    expect(registry.liveCount()).toBe(0);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), "every process to be gone", 10_000);
  });
});
