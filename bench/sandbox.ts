// The sandbox's cost per bash call: the bash tool's runner on `true` (and on a
// small real command) sandboxed in bubblewrap against plain `bash -c`, in one
// run, as the median of interleaved runs. A session's commands share one
// sandbox, whose runner forks each command, so a call costs a fork and exec;
// the session's first command also pays the sandbox's start, shown apart, and
// so is where bubblewrap's own time goes: `bwrap` with one namespace or mount
// option at a time, without node. Goal: sandboxed / plain under 1.5x for
// `true`. Run: npx tsx bench/sandbox.ts
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findExecutable } from "../src/sandbox/bubblewrap-probe.js";
import { Sandbox } from "../src/sandbox/sandbox.js";
import { sandboxPolicy } from "../src/sandbox/sandbox-policy.js";
import { runCommand } from "../src/tools/run-command.js";

const RUNS = 41;
const GOAL = 1.5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

const bubblewrap = findExecutable("bwrap", process.env.PATH);
if (bubblewrap === undefined) {
  process.stdout.write("bench/sandbox: bubblewrap (bwrap) is not installed; nothing to measure\n");
  process.exit(0);
}

const root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-bench-sandbox-")));
const workspace = join(root, "work");
mkdirSync(workspace);
const sandbox = new Sandbox(
  sandboxPolicy(
    {},
    { workspace, home: process.env.HOME ?? root, rudderHome: join(root, "rudder") },
  ),
  { env: process.env },
);

try {
  const first = await timed(() =>
    runCommand("true", { cwd: workspace, timeoutMs: 10_000, sandbox }),
  );
  process.stdout.write(
    `first sandboxed command of a session (probe, sandbox start): ${first.toFixed(1)} ms\n`,
  );
  const commands = ["true", "ls -la >/dev/null && git --version >/dev/null"];
  for (const command of commands) {
    // Warm both paths (the page cache).
    await runCommand(command, { cwd: workspace, timeoutMs: 10_000, sandbox });
    await runCommand(command, { cwd: workspace, timeoutMs: 10_000 });
    const plain: number[] = [];
    const sandboxed: number[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      plain.push(await timed(() => runCommand(command, { cwd: workspace, timeoutMs: 10_000 })));
      sandboxed.push(
        await timed(() => runCommand(command, { cwd: workspace, timeoutMs: 10_000, sandbox })),
      );
    }
    const ratio = median(sandboxed) / median(plain);
    process.stdout.write(
      `bash tool runner, \`${command}\`: plain ${median(plain).toFixed(1)} ms, sandboxed ` +
        `${median(sandboxed).toFixed(1)} ms: ${ratio.toFixed(2)}x` +
        `${command === "true" ? ` (goal under ${GOAL}x${ratio < GOAL ? ", met" : ", NOT met"})` : ""}\n`,
    );
  }

  // Where a sandbox's start goes: each variant spawned directly, median of its runs.
  const base = ["--ro-bind", "/", "/"];
  const variants: [string, string[]][] = [
    ["bash -c true, no bubblewrap", []],
    ["bwrap --ro-bind / /", base],
    ["  + --dev /dev --proc /proc", [...base, "--dev", "/dev", "--proc", "/proc"]],
    ["  + --unshare-pid", [...base, "--unshare-pid"]],
    ["  + --unshare-ipc", [...base, "--unshare-ipc"]],
    ["  + --unshare-net", [...base, "--unshare-net"]],
  ];
  for (const [label, args] of variants) {
    const times: number[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      const start = performance.now();
      if (args.length === 0) spawnSync("bash", ["-c", "true"]);
      else spawnSync(bubblewrap, [...args, "--", "bash", "-c", "true"]);
      times.push(performance.now() - start);
    }
    process.stdout.write(`${label.padEnd(32)} ${median(times).toFixed(1)} ms\n`);
  }
} finally {
  sandbox.close();
  rmSync(root, { recursive: true, force: true });
}
