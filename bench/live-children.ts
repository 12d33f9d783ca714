/** How many agent processes a gateway runs: its live children, counted in /proc (Linux). */
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
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${parent}/task`);
  } catch {
    return 0;
  }
  for (const task of tasks) {
    try {
      const children = readFileSync(`/proc/${parent}/task/${task}/children`, "utf8");
      for (const child of children.split(" ")) if (child !== "" && alive(child)) count += 1;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return count;
}
