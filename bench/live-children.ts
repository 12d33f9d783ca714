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

/** Which of a gateway's children are its agent spawner, by pid (read once each). */
const spawners = new Map<string, boolean>();

function isSpawner(pid: string): boolean {
  let known = spawners.get(pid);
  if (known === undefined) {
    try {
      known = readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("spawner-main");
    } catch {
      known = false;
    }
    spawners.set(pid, known);
  }
  return known;
}
