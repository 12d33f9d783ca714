/**
 * How many agent processes a gateway runs: its live children, counted in /proc (Linux), and
 * those of its agent spawner (src/claude-cli/spawner/) in its stead.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Whether a process is there and not a zombie. */
function alive(pid: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * Children of `parent` that are alive (not zombies), from the children files of its threads:
 * sampled every 20 ms beside the load, a scan of all of /proc (12-35 ms on the shared machine)
 * took the bench's own processor from the requests it times.
 */
export function liveChildren(parent: number): number {
  let count = 0;
  for (const child of childrenOf(String(parent))) {
    if (!alive(child)) continue;
    if (isSpawner(child)) count += childrenOf(child).filter(alive).length;
    else count += 1;
  }
  return count;
}

function childrenOf(parent: string): string[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${parent}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((task) => {
    try {
      return readFileSync(`/proc/${parent}/task/${task}/children`, "utf8")
        .split(" ")
        .filter((child) => child !== "");
    } catch {
      // The thread ended meanwhile.
      return [];
    }
  });
}

/**
 * The gateway's children known to be its agent spawner. Only a match is kept: read between its
 * fork and its exec, a child's command line is still the gateway's.
 */
const spawners = new Set<string>();

function isSpawner(pid: string): boolean {
  if (spawners.has(pid)) return true;
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("spawner-main")) return false;
  } catch {
    return false;
  }
  spawners.add(pid);
  return true;
}
