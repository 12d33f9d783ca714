/**
 * Children that die with rudder however rudder ends: the start of a command
 * that puts a watcher in the child's process group, and what completes such
 * a spawn.
 */
import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";

/**
 * The start of an owned child, run by `/bin/sh -c SCRIPT program args...`.
 * Descriptor `fd` is a pipe whose other end only rudder holds: it reads as
 * ready (end of file) once rudder is gone, however it ended, SIGKILL
 * included. A watcher in the child's process group waits on it and then
 * ends the whole group (`ownerGone`); the program itself runs as it is
 * (`exec`), without that descriptor. When rudder ends the child first, it
 * kills the group as usual, the watcher with it. `before` runs in the shell
 * just before the `exec` (the watcher is already started, outside what it
 * does).
 */
function ownedScript(fd: number, before: string, graceMs: number | undefined): string {
  const watcher = ownerGone(`read -r _ <&${fd}`, graceMs);
  return `{ ${watcher}; } </dev/null >/dev/null 2>&1 & exec ${fd}<&-; ${before}exec "$@"`;
}

/**
 * What the watcher does: `wait` (for rudder to be gone), then end the group.
 * Without a grace: SIGKILL to the group at once. With one: SIGTERM to the
 * group (the watcher ignores it, and it ignores the one rudder sends the
 * group to stop the program), then SIGKILL once the program (the shell's own
 * pid, `$$`, which it becomes) has exited or the grace has run out, in tenths
 * of a second. So a program that stops its own work on SIGTERM gets the time to
 * do so, as when rudder stops it.
 */
function ownerGone(wait: string, graceMs: number | undefined): string {
  if (graceMs === undefined) return `${wait}; kill -s KILL 0`;
  const tenths = Math.max(1, Math.ceil(graceMs / 100));
  // Gone: its /proc entry shows it a zombie (state Z) or is no more. An orphan's zombie may
  // never be reaped (an init that does not reap), so `kill -0` would not tell.
  const running = `read -r _ _ state _ </proc/$$/stat && [ "$state" != Z ]`;
  return `trap '' TERM; ${wait}; kill -s TERM 0; n=0; while [ $n -lt ${tenths} ] && ${running}; do sleep 0.1; n=$((n+1)); done; kill -s KILL 0`;
}

export interface OwnedOptions {
  /** Shell code run just before the program's `exec` (after the watcher has started). */
  before?: string | undefined;
  /**
   * When rudder dies: SIGTERM to the group first, and SIGKILL once the
   * program has exited or after this long. Default: SIGKILL at once.
   */
  graceMs?: number | undefined;
}

/**
 * How to start `file args` so that its whole process group is SIGKILLed when
 * rudder dies, with a pipe at child descriptor `fd` (a single digit, after the
 * program's own descriptors) that rudder keeps open until then. Spawn the
 * result detached, with a `"pipe"` at `stdio[fd]`, then `watchOwned` it.
 * bubblewrap needs this beyond its die-with-parent: SIGKILLed by its parent's
 * death before it has released its sandbox's first process, it leaves that
 * process waiting forever for the release (bubblewrap issue #633); the
 * watcher kills it, as it is still in the group.
 */
export function ownedCommand(
  file: string,
  args: readonly string[],
  fd: number,
  options: OwnedOptions = {},
): [string, string[]] {
  return [
    "/bin/sh",
    ["-c", ownedScript(fd, options.before ?? "", options.graceMs), "sh", file, ...args],
  ];
}

/**
 * Completes an `ownedCommand` spawn: rudder's end of the watcher's pipe
 * never fails loudly, and once the program has exited its group (the
 * watcher, anything it left) is SIGKILLed, which also lets the child's
 * `close` come. Like stdout, that end keeps rudder alive until it closes: a
 * caller that lets an idle child not hold rudder unrefs it with the others
 * (`child.stdio`).
 */
export function watchOwned(child: ChildProcess, fd: number): void {
  (child.stdio[fd] as Readable | null | undefined)?.on("error", () => {});
  child.once("exit", () => killGroup(child.pid));
}

/** SIGKILLs process group `group`; one already gone is no error. */
export function killGroup(group: number | undefined): void {
  if (group === undefined) return;
  try {
    process.kill(-group, "SIGKILL");
  } catch {
    // Gone already.
  }
}
