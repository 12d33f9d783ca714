/**
 * Starts an agent process from this process: detached in a process group of its own, stdio
 * piped, the parent-death signal set (`withParentDeathSignal`), at the niceness asked. Node's
 * `spawn` holds the event loop until the child has exec'd; `rudder serve` starts its agents
 * from a spawner process instead (src/claude-cli/spawner/).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { setPriority } from "node:os";
import { withParentDeathSignal } from "./parent-death.js";
import type { ChildSpawner, SpawnOptions } from "./spawned-child.js";

export function spawnDirect(command: readonly string[], options: SpawnOptions): ChildProcess {
  const [binary = "claude", ...args] = withParentDeathSignal(command);
  const child = spawn(binary, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  if (options.niceness !== undefined && child.pid !== undefined) {
    try {
      setPriority(child.pid, options.niceness);
    } catch {
      // Gone already, or a system that refuses: the child runs at the host's priority.
    }
  }
  return child;
}

/** The spawner of one-process hosts (`rudder run`, `rudder chat`, library users). */
export const directSpawner: ChildSpawner = { spawn: spawnDirect };
