// The permission gate's own cost: loading the bash grammar (once, when the first command with
// shell syntax is judged) and judging one command after that, over the gate corpus
// (test/permissions/corpus/gate.txt), unsandboxed and sandboxed. Goal (issue 26): judging
// under 1 ms at the median.
// Run: node --import tsx bench/gate.ts (RUDDER_BENCH_ROUNDS=N, default 20).
import { performance } from "node:perf_hooks";
import { readCorpus } from "../test/permissions/corpus.js";

const ROUNDS = Number(process.env.RUDDER_BENCH_ROUNDS ?? 20);

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
}

const { loadBashParser } = await import("../src/permissions/bash-parser.js");
const loadStart = performance.now();
await loadBashParser();
const loadMs = performance.now() - loadStart;
const { evaluatePermission } = await import("../src/permissions/evaluate.js");
const { emptyRules } = await import("../src/permissions/types.js");

const commands = readCorpus("gate").map((entry) => entry.command);
const rules = emptyRules();
const samples: Record<"unsandboxed" | "sandboxed", number[]> = { unsandboxed: [], sandboxed: [] };
for (let round = 0; round < ROUNDS; round += 1) {
  for (const command of commands) {
    for (const posture of ["unsandboxed", "sandboxed"] as const) {
      const start = performance.now();
      evaluatePermission("bash", { command }, rules, "/home/me/project", {
        home: "/home/me",
        sandboxed: posture === "sandboxed",
      });
      // The first round warms the JIT; it is not counted.
      if (round > 0) samples[posture].push(performance.now() - start);
    }
  }
}

process.stdout.write(
  `gate: ${commands.length} commands x ${ROUNDS - 1} rounds; grammar loaded in ${loadMs.toFixed(1)} ms (once, at the first command with shell syntax)\n`,
);
for (const [posture, values] of Object.entries(samples)) {
  const median = percentile(values, 0.5);
  process.stdout.write(
    `  judging, ${posture}: median ${(median * 1000).toFixed(0)} µs, p99 ${(percentile(values, 0.99) * 1000).toFixed(0)} µs, max ${(percentile(values, 1) * 1000).toFixed(0)} µs (goal: median under 1 ms: ${median < 1 ? "met" : "NOT met"})\n`,
  );
}
