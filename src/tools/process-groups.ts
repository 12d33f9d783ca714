/**
 * A registry of the process groups rudder has started and not yet finished
 * killing, so that rudder's own exit (normal, SIGTERM or SIGINT) takes every
 * one of them down with it.
 */

/** How long a group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 200;

/** How long a shutdown waits for the killed groups' leaders to be reaped. */
export const SHUTDOWN_WAIT_MS = 2000;

const liveGroups = new Set<number>();
const terminating = new Set<number>();
/** When each group's leader has exited (and Node has reaped it), for those that said. */
const leaderExits = new Map<number, Promise<unknown>>();
let exitHandlerInstalled = false;
let signalCleanupInstalled = false;

/** Why rudder took every group down: a signal it got, or its exit with groups still live. */
export type GroupsKillCause = "SIGTERM" | "SIGINT" | "exit";
const killListeners = new Set<(cause: GroupsKillCause) => void>();
let killsReported = false;

/**
 * Calls `listener` when rudder, on its way out, takes its tools' process trees down: the groups
 * still live here, and a sandbox's commands, which die with rudder (bubblewrap's
 * `--die-with-parent`). On SIGTERM or SIGINT, or at its exit (a normal one too: the listener
 * tells whether anything was running). Called once, synchronously, before the first signal is
 * sent, so a listener can record what is being killed (appending to a file is fine; nothing
 * asynchronous completes in an `exit` handler). Returns the unsubscribe.
 */
export function onGroupsKilled(listener: (cause: GroupsKillCause) => void): () => void {
  installExitHandler();
  killListeners.add(listener);
  return () => killListeners.delete(listener);
}

function reportKill(cause: GroupsKillCause): void {
  if (killsReported) return;
  killsReported = true;
  for (const listener of killListeners) {
    try {
      listener(cause);
    } catch {
      // A listener's failure must not keep the groups alive.
    }
  }
}

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
  process.on("exit", () => {
    reportKill("exit");
    killAllProcessGroups();
  });
}

/**
 * Records a freshly spawned, detached child whose pid is its process group id. With `exited`
 * (settles once the child's `exit` event came), a shutdown on a signal waits for the child to
 * be reaped before rudder exits, so it is neither orphaned nor left a zombie.
 */
export function registerProcessGroup(groupId: number, exited?: Promise<unknown>): void {
  installExitHandler();
  liveGroups.add(groupId);
  if (exited !== undefined) {
    leaderExits.set(groupId, exited);
    void exited.then(() => leaderExits.delete(groupId));
  }
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

function waitForLeaders(timeoutMs: number): Promise<void> {
  if (leaderExits.size === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    void Promise.all(leaderExits.values()).then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Takes every live group down and waits (bounded) for the leaders that registered their exit:
 * SIGTERM, up to the grace period, SIGKILL for what is left, up to `waitMs` more. Never rejects.
 */
export async function shutdownProcessGroups(
  graceMs = KILL_GRACE_MS,
  waitMs = SHUTDOWN_WAIT_MS,
  cause: GroupsKillCause = "exit",
): Promise<void> {
  reportKill(cause);
  for (const groupId of liveGroups) signalGroup(groupId, "SIGTERM");
  await waitForLeaders(graceMs);
  for (const groupId of liveGroups) signalGroup(groupId, "SIGKILL");
  await waitForLeaders(waitMs);
  killAllProcessGroups();
}

/** How many groups are still registered (for tests and diagnostics). */
export function liveProcessGroupCount(): number {
  return liveGroups.size;
}

/**
 * On SIGTERM or SIGINT: take every live group down (`shutdownProcessGroups`: children that
 * registered their exit are reaped first, within a bound), then exit with 128 + the signal
 * number, as a shell would report it. A second signal meanwhile exits at once. Installed
 * once; the CLI calls it.
 */
export function installSignalCleanup(): void {
  if (signalCleanupInstalled) return;
  signalCleanupInstalled = true;
  installExitHandler();
  const numbers: Record<"SIGTERM" | "SIGINT", number> = { SIGTERM: 15, SIGINT: 2 };
  let shuttingDown = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      const code = 128 + numbers[signal];
      if (shuttingDown) {
        reportKill(signal);
        killAllProcessGroups();
        process.exit(code);
      }
      shuttingDown = true;
      void shutdownProcessGroups(KILL_GRACE_MS, SHUTDOWN_WAIT_MS, signal).then(() =>
        process.exit(code),
      );
    });
  }
}
