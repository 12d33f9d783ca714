import type { ChildProcessByStdio } from "node:child_process";
import { accessSync, constants } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { findExecutable } from "./bubblewrap-probe.js";
import { childProcess } from "./child-process.js";
import { ownedCommand } from "./owned-command.js";

export interface OwnedSpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Spawns `file args` unconfined (hooks and MCP servers are the user's own
 * configuration) but owned: detached in its own process group, stdin,
 * stdout and stderr piped, and its group SIGKILLed when rudder dies
 * (`ownedCommand`), as a sandboxed command would be by bubblewrap's
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
    return childProcess().spawn(file, [...args], {
      ...options,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
  }
  const [shell, shellArgs] = ownedCommand(file, args, 3);
  const child = childProcess().spawn(shell, shellArgs, {
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
