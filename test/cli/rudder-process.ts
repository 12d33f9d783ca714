import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

export const RUDDER_CLI = join(import.meta.dirname, "..", "..", "dist", "cli.js");

export interface RudderRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the built `rudder` CLI in its own process group, collecting its output. */
export function startRudder(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): RudderRun {
  const child = spawn(process.execPath, [RUDDER_CLI, ...args], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Kills the whole group of a started rudder, if it is still there. */
export function killRudderGroup(run: RudderRun): void {
  if (run.child.pid === undefined) return;
  try {
    process.kill(-run.child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * Stops a started rudder as a supervisor would: SIGTERM, up to `graceMs` for it to exit, then
 * its whole group SIGKILLed (what it left behind included).
 */
export async function stopRudder(run: RudderRun, graceMs = 5000): Promise<void> {
  run.child.kill("SIGTERM");
  await Promise.race([run.exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
  killRudderGroup(run);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
