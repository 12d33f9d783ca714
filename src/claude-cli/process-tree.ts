import { readdirSync, readFileSync } from "node:fs";

/** A process identified by pid and start time, so a recycled pid is never signalled. */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

interface StatEntry {
  pid: number;
  state: string;
  parentPid: number;
  startTime: string;
}

/** Fields of `/proc/<pid>/stat`; the command name may hold spaces and parentheses. */
function readStat(pid: number): StatEntry | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const parentPid = Number(fields[1]);
  const startTime = fields[19];
  if (!Number.isFinite(parentPid) || startTime === undefined) return undefined;
  return { pid, state: fields[0] ?? "", parentPid, startTime };
}

/**
 * Every live descendant of `rootPid` (children, grandchildren, ...). Needed because the Claude
 * CLI starts each Bash tool in its own session: signalling the CLI's process group does not
 * reach them. Read from each process's `task/<tid>/children` (a read or two per process of the
 * tree); where the kernel has no such files, by walking the parent links of every process in
 * /proc, which costs a read per process of the machine (12-35 ms on a busy one, at each stop
 * of an agent). Empty where /proc is missing.
 */
export function listDescendants(rootPid: number): ProcessIdentity[] {
  if (hasChildrenFiles === undefined) hasChildrenFiles = childrenFilesExist();
  return hasChildrenFiles ? descendantsByChildren(rootPid) : descendantsByParentLinks(rootPid);
}

/** Whether this kernel lists each task's children (`CONFIG_PROC_CHILDREN`); known after one look. */
let hasChildrenFiles: boolean | undefined;

function childrenFilesExist(): boolean {
  try {
    readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8");
    return true;
  } catch {
    return false;
  }
}

/** The children of every thread of `pid` (a process that is gone has none). */
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const task of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8");
      for (const child of text.split(" ")) if (child !== "") children.push(Number(child));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return children;
}

function descendantsByChildren(rootPid: number): ProcessIdentity[] {
  const found: ProcessIdentity[] = [];
  const pending = [rootPid];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    for (const child of childrenOf(pid)) {
      const entry = readStat(child);
      if (entry === undefined || entry.parentPid !== pid) continue;
      found.push({ pid: child, startTime: entry.startTime });
      pending.push(child);
    }
  }
  return found;
}

/** `listDescendants` the slow way, which every kernel with /proc allows (the reference in tests). */
export function descendantsByParentLinks(rootPid: number): ProcessIdentity[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const byParent = new Map<number, StatEntry[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const entry = readStat(Number(name));
    if (!entry) continue;
    const siblings = byParent.get(entry.parentPid) ?? [];
    siblings.push(entry);
    byParent.set(entry.parentPid, siblings);
  }
  const found: ProcessIdentity[] = [];
  const pending = [rootPid];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    for (const child of byParent.get(pid) ?? []) {
      found.push({ pid: child.pid, startTime: child.startTime });
      pending.push(child.pid);
    }
  }
  return found;
}

/** True while the very process recorded (same pid, same start time) exists and is not a zombie. */
export function isSameProcessAlive(identity: ProcessIdentity): boolean {
  const entry = readStat(identity.pid);
  return entry !== undefined && entry.startTime === identity.startTime && entry.state !== "Z";
}

/** SIGKILLs each recorded process (and its own group, if it leads one) that is still itself. */
export function killRecorded(identities: readonly ProcessIdentity[]): void {
  for (const identity of identities) {
    if (!isSameProcessAlive(identity)) continue;
    signal(-identity.pid, "SIGKILL");
    signal(identity.pid, "SIGKILL");
  }
}

/** `process.kill` that treats "no such process" (and a group that is not one) as done. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ESRCH: already gone; EPERM cannot happen for our own children.
  }
}
