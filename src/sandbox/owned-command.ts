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
 * SIGKILLs the whole group; the program itself runs as it is (`exec`),
 * without that descriptor. When rudder ends the child first, it kills the
 * group as usual, the watcher with it. `before` runs in the shell just
 * before the `exec` (the watcher is already started, outside what it does).
 */
function ownedScript(fd: number, before = ""): string {
  return `{ read -r _ <&${fd}; kill -s KILL 0; } </dev/null >/dev/null 2>&1 & exec ${fd}<&-; ${before}exec "$@"`;
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
  before?: string,
): [string, string[]] {
  return ["/bin/sh", ["-c", ownedScript(fd, before), "sh", file, ...args]];
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
