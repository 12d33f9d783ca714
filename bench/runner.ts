// What keeping a Claude process per channel buys, and what the runner costs, in one run:
//   1. a warm turn through ClaudeProcess vs a cold one-shot `claude -p` (the real CLI, against
//      the loopback fake Messages API, so model time is near zero and process cost shows);
//   2. ClaudeProcess's own per-turn overhead over a raw stdin/stdout pipe to the fake CLI.
// Run: node --import tsx bench/runner.ts   (installs the pinned CLI into .cache/ if needed)
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { ClaudeProcess } from "../src/claude-cli/claude-process.js";
import type { ClaudeProcessOptions } from "../src/claude-cli/claude-process-types.js";
import { NdjsonDecoder } from "../src/claude-cli/ndjson.js";
import { echoFallback, startFakeMessagesApi } from "../test/helpers/fake-messages-api.js";

const repositoryRoot = join(import.meta.dirname, "..");
const FAKE_CLAUDE = join(repositoryRoot, "test", "fixtures", "fake-claude");
const REAL_ROUNDS = 7;
const FAKE_ROUNDS = 41;

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** A cold `claude -p` for one prompt, to exit. */
function oneShot(claudeBin: string, options: ClaudeProcessOptions, prompt: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const environment = { ...process.env, ...options.env } as Record<string, string>;
    const child = spawn(
      claudeBin,
      ["-p", prompt, "--output-format", "json", "--model", options.model ?? "claude-sonnet-4-5"],
      { cwd: options.cwd, env: environment, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk;
    });
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0 && output.includes('"result"')) resolve();
      else reject(new Error(`claude -p exited with ${code}: ${output.slice(0, 300)}`));
    });
  });
}

/** The fake CLI driven by hand: one line in, read lines until `result`. No runner involved. */
class RawPipe {
  readonly #child: ChildProcess;
  #waiting: (() => void) | undefined;

  constructor() {
    this.#child = spawn(FAKE_CLAUDE, ["-p", "--input-format", "stream-json"], {
      env: { ...process.env, FAKE_CLAUDE_SCENARIO: "normal" },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.#child.stderr?.resume();
    const decoder = new NdjsonDecoder({
      onValue: (value) => {
        if ((value as { type?: string }).type === "result") this.#waiting?.();
      },
      onError: () => {},
    });
    this.#child.stdout?.on("data", (chunk: Buffer) => decoder.push(chunk));
  }

  turn(text: string): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting = resolve;
      const line = { type: "user", message: { role: "user", content: text }, uuid: randomUUID() };
      this.#child.stdin?.write(`${JSON.stringify(line)}\n`);
    });
  }

  close(): void {
    this.#child.stdin?.end();
    try {
      if (this.#child.pid !== undefined) process.kill(-this.#child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

async function realCliComparison(scratch: string): Promise<void> {
  const claudeBin = execFileSync(
    "bash",
    [join(repositoryRoot, "scripts", "install-claude-code.sh"), "--print-path"],
    { encoding: "utf8" },
  ).trim();
  const api = await startFakeMessagesApi({ fallback: echoFallback });
  const home = join(scratch, "home");
  const temporary = join(scratch, "tmp");
  const workspace = join(scratch, "workspace");
  for (const directory of [home, temporary, workspace]) mkdirSync(directory, { recursive: true });
  const options: ClaudeProcessOptions = {
    claudeBin,
    model: "claude-sonnet-4-5",
    cwd: workspace,
    maxRetries: 0,
    permissionMode: "bypassPermissions",
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
  const proc = new ClaudeProcess("bench", options);
  try {
    await proc.runTurn("warm up", { timeoutMs: 60_000 });
    await oneShot(claudeBin, options, "warm up the disk cache");
    const warm: number[] = [];
    const cold: number[] = [];
    // Alternate, so background load falls on both alike.
    for (let round = 0; round < REAL_ROUNDS; round += 1) {
      warm.push(await timed(() => proc.runTurn(`warm ${round}`, { timeoutMs: 60_000 })));
      cold.push(await timed(() => oneShot(claudeBin, options, `cold ${round}`)));
    }
    const warmMs = median(warm);
    const coldMs = median(cold);
    console.log("real Claude Code CLI against the fake Messages API (median of %d)", REAL_ROUNDS);
    console.log(`  warm turn, ClaudeProcess   ${warmMs.toFixed(1).padStart(8)} ms`);
    console.log(`  cold one-shot claude -p    ${coldMs.toFixed(1).padStart(8)} ms`);
    console.log(`  cold / warm                ${(coldMs / warmMs).toFixed(1).padStart(8)} x`);
  } finally {
    await proc.stop();
    await api.close();
  }
}

async function runnerOverhead(): Promise<void> {
  const raw = new RawPipe();
  const proc = new ClaudeProcess("bench-fake", {
    claudeBin: FAKE_CLAUDE,
    env: { FAKE_CLAUDE_SCENARIO: "normal" },
  });
  try {
    await raw.turn("warm up");
    await proc.runTurn("warm up");
    const rawTimes: number[] = [];
    const runnerTimes: number[] = [];
    for (let round = 0; round < FAKE_ROUNDS; round += 1) {
      rawTimes.push(await timed(() => raw.turn(`raw ${round}`)));
      runnerTimes.push(await timed(() => proc.runTurn(`runner ${round}`)));
    }
    const rawMs = median(rawTimes);
    const runnerMs = median(runnerTimes);
    console.log("fake CLI, per turn (median of %d)", FAKE_ROUNDS);
    console.log(`  raw pipe                   ${rawMs.toFixed(2).padStart(8)} ms`);
    console.log(`  ClaudeProcess.runTurn      ${runnerMs.toFixed(2).padStart(8)} ms`);
    console.log(`  runner / raw               ${(runnerMs / rawMs).toFixed(2).padStart(8)} x`);
    console.log(`  runner overhead            ${(runnerMs - rawMs).toFixed(2).padStart(8)} ms`);
  } finally {
    raw.close();
    await proc.stop();
  }
}

export async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "rudder-bench-runner-"));
  try {
    await realCliComparison(scratch);
    await runnerOverhead();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
