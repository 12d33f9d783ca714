import type { ChildProcess } from "node:child_process";
import { killRecorded, listDescendants, signal } from "./process-tree.js";

/** Children still running, killed by a process 'exit' handler if the host exits first. */
const liveChildren = new Set<ChildProcess>();
let exitHandlerInstalled = false;

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Resolves after `milliseconds` on a timer that never keeps the host alive by itself. */
function graceTimer(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds).unref());
}

/**
 * Kills every tracked child's group and recorded descendants, synchronously: the last chance
 * at host exit, when no timer will fire again.
 */
function killAllNow(): void {
  for (const child of liveChildren) {
    if (child.pid === undefined) continue;
    const descendants = listDescendants(child.pid);
    signal(-child.pid, "SIGKILL");
    killRecorded(descendants);
  }
  liveChildren.clear();
}

/**
 * Registers a spawned (detached) child so that it is SIGKILLed with its whole tree if the host
 * process exits while it runs.
 */
export function trackChild(child: ChildProcess): void {
  if (!exitHandlerInstalled) {
    exitHandlerInstalled = true;
    process.on("exit", killAllNow);
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
export async function terminateProcessTree(child: ChildProcess, graceMs: number): Promise<void> {
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
