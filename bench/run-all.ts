/**
 * `npm run bench`: every benchmark, one after another, each in its own
 * process so that one's memory and timers do not colour the next. Each
 * prints its own ratios against its reference.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const BENCHES = [
  "glob.ts",
  "runner.ts",
  "startup.ts",
  "gateway.ts",
  "sse-flood.ts",
  "sandbox.ts",
  "long-session.ts",
  "cluster.ts",
  "transcripts.ts",
];

let failed = 0;
for (const name of BENCHES) {
  const path = join(import.meta.dirname, name);
  if (!existsSync(path)) continue;
  process.stdout.write(`\n=== bench/${name} ===\n`);
  const result = spawnSync(process.execPath, ["--import", "tsx", path], { stdio: "inherit" });
  if (result.status !== 0) {
    failed += 1;
    process.stdout.write(`bench/${name} failed (exit ${result.status ?? result.signal})\n`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
