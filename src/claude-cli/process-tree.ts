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
 * Every live descendant of `rootPid` (children, grandchildren, ...), found by walking parent
 * links in /proc. Needed because the Claude CLI starts each Bash tool in its own session:
 * signalling the CLI's process group does not reach them. Empty where /proc is missing.
 */
export function listDescendants(rootPid: number): ProcessIdentity[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const childrenOf = new Map<number, StatEntry[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const entry = readStat(Number(name));
    if (!entry) continue;
    const siblings = childrenOf.get(entry.parentPid) ?? [];
    siblings.push(entry);
    childrenOf.set(entry.parentPid, siblings);
  }
  const found: ProcessIdentity[] = [];
  const pending = [rootPid];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    for (const child of childrenOf.get(pid) ?? []) {
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
