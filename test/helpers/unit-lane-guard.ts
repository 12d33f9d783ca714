/**
 * The unit lane's promise, checked: a test file in the `unit` project (vitest.config.ts) starts
 * no child process. Every child_process entry point is wrapped to note the program (and then
 * does what it always did), and a test that started one fails naming it, so a file that grows a
 * process moves to the `full` project instead of slowing the fast lane unseen.
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { afterEach } from "vitest";

// One list per worker: the unit lane shares its workers between files (isolate: false), and
// this file runs again before each of them, so the wrapping happens once.
const guarded = Symbol.for("rudder.unitLaneGuard");
const holder = globalThis as { [guarded]?: string[] };
let started = holder[guarded];
if (started === undefined) {
  const programs: string[] = [];
  started = programs;
  holder[guarded] = programs;
  const entries = ["spawn", "spawnSync", "execFile", "execFileSync", "exec", "execSync", "fork"];
  for (const name of entries) {
    const original = Reflect.get(childProcess, name) as (...args: unknown[]) => unknown;
    Reflect.set(childProcess, name, (...args: unknown[]) => {
      programs.push(`${name}(${String(args[0])})`);
      return original(...args);
    });
  }
  // The named imports (`import { spawn } from "node:child_process"`) see the wrapped functions.
  syncBuiltinESMExports();
}
const programsStarted = started;

afterEach(() => {
  const programs = programsStarted.splice(0);
  if (programs.length > 0) {
    throw new Error(
      `a unit test started ${programs.join(", ")}: take its file off the unit list in vitest.config.ts`,
    );
  }
});
