/**
 * The built `rudder` CLI (dist/cli.js, `npm run build`) run as a test's own program: started in
 * its own process group with its output collected (test/helpers/owned-process.ts).
 */
import { RUDDER_CLI } from "./fixtures.js";
import {
  type Finished,
  type OwnedProcess,
  type ProcessOptions,
  runProcess,
  startProcess,
  stopProcess,
} from "./owned-process.js";

export type RudderRun = OwnedProcess;

/** Starts `rudder ARGS` (stdin none, `options.input`, or a pipe left open). */
export function startRudder(args: string[], options: ProcessOptions): RudderRun {
  return startProcess(process.execPath, [RUDDER_CLI, ...args], options);
}

/** Runs `rudder ARGS` to its end. */
export function runRudder(
  args: string[],
  options: ProcessOptions & { timeoutMs?: number },
): Promise<Finished> {
  return runProcess(process.execPath, [RUDDER_CLI, ...args], options);
}

/** SIGTERM, up to `graceMs` to exit, then the group SIGKILLed. */
export function stopRudder(run: RudderRun, graceMs = 5000): Promise<void> {
  return stopProcess(run, graceMs);
}
