import { readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { removeIfUnchanged } from "./placeholders.js";

/** The prefix of a sandbox's host folder (`rudder-sandbox-<pid>-<random>`) and of its cgroup (`-<n>`). */
export const STATE_PREFIX = "rudder-sandbox-";

/** In a state folder: the stand-ins its rudder created, so that a sweep can remove them. */
export const PLACEHOLDER_MANIFEST = "placeholders.json";

const OWNED_NAME = /^rudder-sandbox-(\d+)-/;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The entries of `folder` left by a rudder whose pid is gone (a live pid's, or a reused one's, are kept). */
function staleEntries(folder: string): string[] {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  return names.filter((name) => {
    const pid = Number(OWNED_NAME.exec(name)?.[1]);
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isAlive(pid);
  });
}

/**
 * What a rudder killed by SIGKILL (or the OOM killer) could not clean: its
 * sandboxes' host folders in `tmpFolder` (the private /tmp, the proxy's
 * socket) and the workspace stand-ins they list, if still as created, and,
 * in `cgroupFolder`, its empty pids cgroups. Keyed by the dead pid in the
 * names. Synchronous; never throws; run once, before a sandbox first starts.
 * (Paths are joined by hand: this runs in a one-shot's start, whose path work is counted.)
 */
export function sweepStale(tmpFolder: string, cgroupFolder: string | undefined): void {
  for (const name of staleEntries(tmpFolder)) {
    const folder = `${tmpFolder}/${name}`;
    try {
      const paths: unknown = JSON.parse(readFileSync(`${folder}/${PLACEHOLDER_MANIFEST}`, "utf8"));
      if (Array.isArray(paths)) {
        for (const path of paths) if (typeof path === "string") removeIfUnchanged(path);
      }
    } catch {
      // No stand-ins were made.
    }
    rmSync(folder, { recursive: true, force: true });
  }
  if (cgroupFolder === undefined) return;
  for (const name of staleEntries(cgroupFolder)) {
    try {
      rmdirSync(`${cgroupFolder}/${name}`);
    } catch {
      // Not empty yet.
    }
  }
}
