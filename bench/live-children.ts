/** How many agent processes a gateway runs: its live children, counted in /proc (Linux). */
import { readdirSync, readFileSync } from "node:fs";

/** Children of `parent` that are alive (not zombies), from /proc. */
export function liveChildren(parent: number): number {
  let count = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [state, parentPid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(parentPid) === parent && state !== "Z") count += 1;
    } catch {
      // Gone meanwhile.
    }
  }
  return count;
}
