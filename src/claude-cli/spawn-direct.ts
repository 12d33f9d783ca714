/**
 * Starts an agent process from this process: detached in a process group of its own, stdio
 * piped, the parent-death signal set (`withParentDeathSignal`) or, when asked, owned by a
 * watcher in its group (`ownedCommand`, the pipe it watches at descriptor 3), at the niceness
 * asked. Node's `spawn` holds the event loop until the child has exec'd; `rudder serve` starts
 * its agents from a spawner process instead (src/claude-cli/spawner/).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { setPriority } from "node:os";
import { ownedCommand, watchOwned } from "../sandbox/owned-command.js";
import { withParentDeathSignal } from "./parent-death.js";
import type { ChildSpawner, SpawnOptions } from "./spawned-child.js";

/** The descriptor of an owned child's watcher pipe. */
const WATCHER_FD = 3;
/** Ignores SIGTERM in the owned child (before it execs the program), not in its watcher. */
const IGNORE_TERM = "trap '' TERM; ";

export function spawnDirect(command: readonly string[], options: SpawnOptions): ChildProcess {
  const owned = options.owned;
  const [binary = "claude", ...args] =
    owned === undefined
      ? withParentDeathSignal(command)
      : ownedStart(command, {
          before: owned.ignoreTerm ? IGNORE_TERM : "",
          graceMs: owned.graceMs,
        });
  const child = spawn(binary, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: owned === undefined ? ["pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe", "pipe"],
    detached: true,
  });
  if (owned !== undefined) watchOwned(child, WATCHER_FD);
  if (options.niceness !== undefined && child.pid !== undefined) {
    try {
      setPriority(child.pid, options.niceness);
    } catch {
      // Gone already, or a system that refuses: the child runs at the host's priority.
    }
  }
  return child;
}

function ownedStart(
  command: readonly string[],
  options: { before: string; graceMs: number },
): string[] {
  const [file = "claude", ...args] = command;
  const [shell, shellArgs] = ownedCommand(file, args, WATCHER_FD, options);
  return [shell, ...shellArgs];
}

/** The spawner of one-process hosts (`rudder run`, `rudder chat`, library users). */
export const directSpawner: ChildSpawner = { spawn: spawnDirect };
