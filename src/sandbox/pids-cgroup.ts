import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";

/** A cgroup capping how many tasks (processes and threads) the processes put in it may have. */
export interface PidsCgroup {
  /** Writing a pid here moves that process in; its children are born inside. */
  procsFile: string;
  /** Removes the cgroup if it is empty: whether it is gone. Synchronous; never throws. */
  remove(): boolean;
}

/** Where a hierarchy is mounted, by filesystem type and (for cgroup v1) controller. */
function mountPoint(mountInfo: string, version: 1 | 2): string | undefined {
  for (const line of mountInfo.split("\n")) {
    const [before, after] = line.split(" - ");
    if (before === undefined || after === undefined) continue;
    const [type, , options = ""] = after.split(" ");
    const point = before.split(" ")[4];
    if (version === 2 && type === "cgroup2") return point;
    if (version === 1 && type === "cgroup" && options.split(",").includes("pids")) return point;
  }
  return undefined;
}

/** The folder of rudder's own cgroup in the hierarchy that has the pids controller, if any. */
export function ownPidsFolder(): string | undefined {
  try {
    const mountInfo = readFileSync("/proc/self/mountinfo", "utf8");
    for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const [, controllers, path] = line.split(":");
      if (path === undefined) continue;
      if (controllers?.split(",").includes("pids")) {
        const point = mountPoint(mountInfo, 1);
        if (point !== undefined) return `${point}${path === "/" ? "" : path}`;
      }
      if (controllers === "") {
        const point = mountPoint(mountInfo, 2);
        if (point !== undefined) return `${point}${path === "/" ? "" : path}`;
      }
    }
  } catch {
    // No /proc, no cgroups.
  }
  return undefined;
}

/**
 * A child of rudder's own cgroup named `name`, allowing at most `max`
 * tasks, where rudder may make one (root, or a delegated cgroup v2 subtree
 * with the pids controller); undefined where it may not. Synchronous: a few
 * file operations, done once per sandbox start.
 */
export function createPidsCgroup(name: string, max: number): PidsCgroup | undefined {
  const parent = ownPidsFolder();
  if (parent === undefined) return undefined;
  const folder = `${parent}/${name}`;
  try {
    mkdirSync(folder);
  } catch {
    return undefined;
  }
  const remove = (): boolean => {
    try {
      rmdirSync(folder);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT";
    }
  };
  try {
    writeFileSync(`${folder}/pids.max`, String(max));
  } catch {
    remove();
    return undefined;
  }
  return { procsFile: `${folder}/cgroup.procs`, remove };
}
