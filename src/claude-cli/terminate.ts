import { killRecorded, listDescendants, signal } from "./process-tree.js";
import type { SpawnedChild } from "./spawned-child.js";

/** Children still running, killed by a process 'exit' handler if the host exits first. */
const liveChildren = new Set<SpawnedChild>();
let exitHandlerInstalled = false;

export function hasExited(child: SpawnedChild): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: SpawnedChild): Promise<void> {
  if (hasExited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

function startedOrFailed(child: SpawnedChild): Promise<void> {
  return new Promise((resolve) => {
    child.once("spawn", () => resolve());
    child.once("error", () => resolve());
    child.once("exit", () => resolve());
  });
}

/** Resolves after `milliseconds` on a timer that never keeps the host alive by itself. */
function graceTimer(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds).unref());
}

/** SIGKILLs a started child's group and its descendants. */
function killTree(pid: number): void {
  const descendants = listDescendants(pid);
  signal(-pid, "SIGKILL");
  killRecorded(descendants);
}

/**
 * Kills every tracked child's group and recorded descendants, synchronously: the last chance
 * at host exit, when no timer will fire again; also what a host that runs one piece of work
 * after another in one process (a test worker's files) calls between them, so that agents a
 * failed piece never stopped do not outlive it. A child another process is still starting (no
 * pid yet) is killed the moment its pid comes (at host exit, that process's own end takes it).
 * Returns how many it killed or doomed.
 */
export function killLiveChildren(): number {
  const count = liveChildren.size;
  for (const child of liveChildren) {
    const pid = child.pid;
    if (pid !== undefined) killTree(pid);
    else if (child.starting === true) {
      child.once("spawn", () => {
        if (child.pid !== undefined) killTree(child.pid);
      });
    }
  }
  liveChildren.clear();
  return count;
}

/**
 * Registers a spawned (detached) child so that it is SIGKILLed with its whole tree if the host
 * process exits while it runs.
 */
export function trackChild(child: SpawnedChild): void {
  if (!exitHandlerInstalled) {
    exitHandlerInstalled = true;
    process.on("exit", killLiveChildren);
  }
  liveChildren.add(child);
  child.once("exit", () => liveChildren.delete(child));
}

/**
 * Ends a detached child and everything it started. SIGTERM to the group first, which lets the
 * Claude CLI end the Bash tools it runs in sessions of their own; after `graceMs`, SIGKILL to
 * the group and to every descendant recorded before and after the SIGTERM. Descendants that
 * outlive a graceful exit are killed too. Resolves once the child has exited; never rejects.
 */
export async function terminateProcessTree(child: SpawnedChild, graceMs: number): Promise<void> {
  // One another process is starting has no pid yet: it is ended once it has one.
  if (child.pid === undefined && child.starting === true) await startedOrFailed(child);
  const pid = child.pid;
  if (pid === undefined) return;
  const exited = waitForExit(child);
  const recorded = listDescendants(pid);
  if (!hasExited(child)) signal(-pid, "SIGTERM");
  const graceful = await Promise.race([
    exited.then(() => true),
    graceTimer(graceMs).then(() => false),
  ]);
  if (!graceful) {
    const current = listDescendants(pid);
    signal(-pid, "SIGKILL");
    killRecorded([...recorded, ...current]);
    await exited;
  }
  killRecorded(recorded);
}
