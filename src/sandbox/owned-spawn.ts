import { type ChildProcessByStdio, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { findExecutable } from "./bubblewrap-probe.js";

/**
 * The start of an owned child, run by `/bin/sh -c OWNED program args...`.
 * fd 3 is a pipe whose other end only rudder holds: it reads as ready (end of
 * file) once rudder is gone, however it ended, SIGKILL included. A watcher in
 * the child's process group waits on it and then SIGKILLs the whole group;
 * the program itself runs as it is (`exec`), without fd 3. When rudder ends
 * the child first, the group is killed as usual, the watcher with it.
 */
const OWNED =
  '{ read -r _ <&3; kill -s KILL 0; } </dev/null >/dev/null 2>&1 & exec 3<&-; exec "$@"';

export interface OwnedSpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Spawns `file args` unconfined (hooks and MCP servers are the user's own
 * configuration) but owned: detached in its own process group, stdin,
 * stdout and stderr piped, and its group SIGKILLed when rudder dies
 * (`OWNED`), as a sandboxed command would be by bubblewrap's
 * die-with-parent. A program that cannot be found is spawned as it is, so
 * the caller gets spawn's own error for it.
 */
export function spawnOwned(
  file: string,
  args: readonly string[],
  options: OwnedSpawnOptions,
): ChildProcessByStdio<Writable, Readable, Readable> {
  const found = file.includes("/") ? isExecutable(file) : findExecutable(file, options.env.PATH);
  if (!found) {
    return spawn(file, [...args], { ...options, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  }
  const child = spawn("/bin/sh", ["-c", OWNED, "sh", file, ...args], {
    ...options,
    detached: true,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  }) as unknown as ChildProcessByStdio<Writable, Readable, Readable>;
  // Like stdout, the pipe keeps rudder alive until it closes (once the group is gone): a caller
  // that lets an idle child not hold rudder unrefs it with the others (`child.stdio`).
  (child.stdio[3] as Readable | null)?.on("error", () => {});
  return child;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
