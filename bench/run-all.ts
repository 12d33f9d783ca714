/**
 * `npm run bench`: every benchmark, one after another, each in its own
 * process so that one's memory and timers do not colour the next. Each
 * prints its own ratios against its reference.
 *
 * `npm run bench -- sandbox startup` runs only the benches named (file names without `.ts`);
 * `--write` also saves what each printed, with the date, the commit and the machine, as
 * docs/benchmarks/<name>.md (see docs/benchmarks.md), replacing that bench's previous results.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { resultsMarkdown, runContext, writeResultsFile } from "./results-file.js";

const BENCHES = [
  "glob.ts",
  "runner.ts",
  "startup.ts",
  "gate.ts",
  "gateway.ts",
  "agent-cap.ts",
  "sse-flood.ts",
  "sandbox.ts",
  "long-session.ts",
  "cluster.ts",
  "transcripts.ts",
  "page.ts",
  "slack.ts",
];

const args = process.argv.slice(2);
const write = args.includes("--write");
const named = args.filter((arg) => arg !== "--write").map((arg) => arg.replace(/\.ts$/, ""));
const unknown = named.filter((name) => !BENCHES.includes(`${name}.ts`));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: no bench named ${unknown.join(", ")}; the benches are ${BENCHES.map((name) => name.replace(/\.ts$/, "")).join(", ")}\n`,
  );
  process.exit(2);
}
const chosen = BENCHES.filter(
  (name) => named.length === 0 || named.includes(name.replace(/\.ts$/, "")),
);

/** Runs one bench, its output shown as it comes and kept; resolves to that output and its exit. */
function runBench(path: string): Promise<{ output: string; code: number }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", path], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      process.stdout.write(chunk);
    });
    child.on("error", (error) => {
      output += `${error.message}\n`;
    });
    child.on("close", (code, signal) => done({ output, code: code ?? (signal ? 1 : 0) }));
  });
}

let failed = 0;
for (const name of chosen) {
  const path = join(import.meta.dirname, name);
  if (!existsSync(path)) continue;
  process.stdout.write(`\n=== bench/${name} ===\n`);
  const context = runContext();
  const started = performance.now();
  const { output, code } = await runBench(path);
  if (code !== 0) {
    failed += 1;
    process.stdout.write(`bench/${name} failed (exit ${code})\n`);
  }
  if (write) {
    const bench = name.replace(/\.ts$/, "");
    const markdown = resultsMarkdown(
      `bench/${name}`,
      `npm run bench -- --write ${bench}`,
      context,
      (performance.now() - started) / 1000,
      output,
      code,
    );
    const file = writeResultsFile(bench, markdown);
    process.stdout.write(`wrote ${relative(process.cwd(), file)}\n`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
