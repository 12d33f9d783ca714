/**
 * A registry of the process groups rudder has started and not yet finished
 * killing, so that rudder's own exit (normal, SIGTERM or SIGINT) takes every
 * one of them down with it.
 */

/** How long a group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 200;

const liveGroups = new Set<number>();
const terminating = new Set<number>();
let exitHandlerInstalled = false;
let signalCleanupInstalled = false;

function signalGroup(groupId: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-groupId, signal);
    return true;
  } catch {
    // ESRCH: every member is gone already. EPERM cannot happen for our own children.
    return false;
  }
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on("exit", killAllProcessGroups);
}

/** Records a freshly spawned, detached child whose pid is its process group id. */
export function registerProcessGroup(groupId: number): void {
  installExitHandler();
  liveGroups.add(groupId);
}

/**
 * Kills the whole group: SIGTERM now, SIGKILL after the grace period on an
 * unref()ed timer (so a pending kill never keeps rudder alive; the exit
 * handler covers that case). Safe to call more than once.
 */
export function terminateProcessGroup(groupId: number, graceMs = KILL_GRACE_MS): void {
  if (!liveGroups.has(groupId) || terminating.has(groupId)) return;
  if (!signalGroup(groupId, "SIGTERM")) {
    liveGroups.delete(groupId);
    return;
  }
  terminating.add(groupId);
  const timer = setTimeout(() => {
    terminating.delete(groupId);
    if (!liveGroups.delete(groupId)) return;
    signalGroup(groupId, "SIGKILL");
  }, graceMs);
  timer.unref();
}

/** SIGKILLs every live group at once. Synchronous, so it is safe in an `exit` handler. */
export function killAllProcessGroups(): void {
  for (const groupId of liveGroups) signalGroup(groupId, "SIGKILL");
  liveGroups.clear();
  terminating.clear();
}

/** How many groups are still registered (for tests and diagnostics). */
export function liveProcessGroupCount(): number {
  return liveGroups.size;
}

/**
 * On SIGTERM or SIGINT: kill every live group, then exit with 128 + the
 * signal number, as a shell would report it. Installed once; the CLI calls it.
 */
export function installSignalCleanup(): void {
  if (signalCleanupInstalled) return;
  signalCleanupInstalled = true;
  installExitHandler();
  const numbers: Record<"SIGTERM" | "SIGINT", number> = { SIGTERM: 15, SIGINT: 2 };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      killAllProcessGroups();
      process.exit(128 + numbers[signal]);
    });
  }
}
