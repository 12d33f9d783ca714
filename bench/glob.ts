// The glob tool against `rg --files` and tinyglobby on a generated tree of
// 100,000 files, printed as ratios to the fastest. Run: npx tsx bench/glob.ts
// (or import runGlobBench). Each runner's median of 11 runs, taken in turns.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { glob as tinyglobby } from "tinyglobby";
import { findFiles, MAX_GLOB_LINES } from "../src/tools/glob-tool.js";

const FILE_COUNT = 100_000;
const RUNS = 11;
const EXTENSIONS = ["ts", "js", "json", "md", "txt"];

interface Case {
  label: string;
  pattern: string;
  /** The same selection as ripgrep globs (which match names anywhere unless anchored). */
  ripgrep: string[];
}

const cases: Case[] = [
  { label: "**/*.ts", pattern: "**/*.ts", ripgrep: ["-g", "*.ts"] },
  { label: "**/*", pattern: "**/*", ripgrep: [] },
  { label: "pkg03/**/*.json", pattern: "pkg03/**/*.json", ripgrep: ["-g", "*.json", "pkg03"] },
  { label: "*/src/*.{ts,md}", pattern: "*/src/*.{ts,md}", ripgrep: ["-g", "/*/src/*.{ts,md}"] },
];

/** pkgNN/{src,test,docs,lib}/dirNN/fileN.ext: 40 x 4 x 25 directories of 25 files. */
function generateTree(root: string): void {
  let written = 0;
  for (let pkg = 0; written < FILE_COUNT; pkg += 1) {
    for (const area of ["src", "test", "docs", "lib"]) {
      const areaDir = join(root, `pkg${String(pkg).padStart(2, "0")}`, area);
      for (let dir = 0; dir < 25 && written < FILE_COUNT; dir += 1) {
        const leaf = join(areaDir, `dir${String(dir).padStart(2, "0")}`);
        mkdirSync(leaf, { recursive: true });
        for (let file = 0; file < 25 && written < FILE_COUNT; file += 1, written += 1) {
          writeFileSync(join(leaf, `file${file}.${EXTENSIONS[file % EXTENSIONS.length]}`), "");
        }
      }
      if (written < FILE_COUNT) {
        writeFileSync(join(areaDir, `index.${EXTENSIONS[pkg % EXTENSIONS.length]}`), "");
        written += 1;
      }
    }
  }
}

function ripgrep(cwd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/rg", ["--files", "--hidden", "--no-ignore", ...args], {
      cwd,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let lines = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 10) lines += 1;
    });
    child.on("error", reject);
    child.on("close", () => resolve(lines));
  });
}

interface Timing {
  ms: number;
  count: number;
}

/**
 * Median wall time of each runner, taking turns run by run so that load from
 * elsewhere on the machine falls on all of them alike.
 */
async function interleaved(
  runners: Record<string, () => Promise<number>>,
): Promise<Record<string, Timing>> {
  const times: Record<string, number[]> = {};
  const counts: Record<string, number> = {};
  for (const [name, run] of Object.entries(runners)) {
    times[name] = [];
    counts[name] = await run();
  }
  for (let index = 0; index < RUNS; index += 1) {
    for (const [name, run] of Object.entries(runners)) {
      const start = performance.now();
      counts[name] = await run();
      times[name]!.push(performance.now() - start);
    }
  }
  const timings: Record<string, Timing> = {};
  for (const [name, list] of Object.entries(times)) {
    list.sort((left, right) => left - right);
    timings[name] = { ms: list[Math.floor(list.length / 2)]!, count: counts[name]! };
  }
  return timings;
}

export async function runGlobBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "rudder-bench-glob-"));
  try {
    const began = performance.now();
    generateTree(root);
    console.log(
      `generated ${FILE_COUNT} files in ${Math.round(performance.now() - began)} ms under ${root}`,
    );
    const signal = new AbortController().signal;
    let worst = 0;
    for (const item of cases) {
      const results = await interleaved({
        "rudder glob": async () => {
          const found = await findFiles(root, item.pattern, signal, MAX_GLOB_LINES);
          if (!found.ok) throw new Error(found.error);
          return found.total;
        },
        "rg --files": () => ripgrep(root, item.ripgrep),
        tinyglobby: async () =>
          (await tinyglobby(item.pattern, { cwd: root, dot: true, onlyFiles: true })).length,
      });
      const fastest = Math.min(...Object.values(results).map((result) => result.ms));
      console.log(`\npattern ${item.label}`);
      for (const [name, result] of Object.entries(results)) {
        const ratio = result.ms / fastest;
        console.log(
          `  ${name.padEnd(12)} ${result.ms.toFixed(1).padStart(8)} ms  ${String(result.count).padStart(7)} files  ${ratio.toFixed(2)}x`,
        );
      }
      worst = Math.max(worst, results["rudder glob"]!.ms / fastest);
    }
    console.log(
      `\nrudder glob, worst ratio to the fastest: ${worst.toFixed(2)}x (goal: at most 1.50x)`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runGlobBench();
}
