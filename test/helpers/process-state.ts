/** Whether a process is alive, as the tests ask it after killing or stopping one. */
import { readFileSync } from "node:fs";

/** True while `pid` is a live process; a zombie (exited, not yet reaped) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** True while process group `group` has a member (zombies included). */
export function groupIsAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}
