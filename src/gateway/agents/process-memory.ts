/**
 * How much memory each agent uses: the resident set (RSS) of its whole process tree (the agent,
 * its sandbox, the commands it runs), from /proc. One pass reads every process's parent from
 * `/proc/<pid>/stat` and the tree members' `VmRSS` from `/proc/<pid>/status`, all with
 * asynchronous reads, so the event loop is never held for the scan; a pass is reused for a
 * second, as the page asks every few seconds. Where /proc is missing every size is null.
 */
import { readdir, readFile } from "node:fs/promises";

const REUSE_MS = 1000;

async function parentOf(pid: number): Promise<number | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, "utf8");
    const parent = Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isFinite(parent) ? parent : undefined;
  } catch {
    return undefined;
  }
}

async function residentBytes(pid: number): Promise<number> {
  try {
    const text = await readFile(`/proc/${pid}/status`, "utf8");
    const kilobytes = /^VmRSS:\s+(\d+)\s+kB/m.exec(text)?.[1];
    return kilobytes === undefined ? 0 : Number(kilobytes) * 1024;
  } catch {
    return 0;
  }
}

/** Each root's tree's RSS in bytes (null for a root that is gone or where /proc is missing). */
export async function treeResidentBytes(
  roots: readonly number[],
): Promise<Map<number, number | null>> {
  const sizes = new Map<number, number | null>(roots.map((pid) => [pid, null]));
  if (roots.length === 0) return sizes;
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return sizes;
  }
  const pids = names.filter((name) => /^\d+$/.test(name)).map(Number);
  const parents = await Promise.all(pids.map(parentOf));
  const children = new Map<number, number[]>();
  pids.forEach((pid, index) => {
    const parent = parents[index];
    if (parent === undefined) return;
    const siblings = children.get(parent) ?? [];
    siblings.push(pid);
    children.set(parent, siblings);
  });
  const alive = new Set(pids);
  await Promise.all(
    roots.map(async (root) => {
      if (!alive.has(root)) return;
      const tree: number[] = [];
      for (const pending = [root]; pending.length > 0; ) {
        const pid = pending.pop() as number;
        tree.push(pid);
        pending.push(...(children.get(pid) ?? []));
      }
      const bytes = await Promise.all(tree.map(residentBytes));
      sizes.set(
        root,
        bytes.reduce((sum, value) => sum + value, 0),
      );
    }),
  );
  return sizes;
}

/** `treeResidentBytes` with a pass reused for a second (one pass at a time). */
export class ProcessMemory {
  #last: { at: number; roots: string; sizes: Promise<Map<number, number | null>> } | undefined;

  measure(roots: readonly number[]): Promise<Map<number, number | null>> {
    const key = [...roots].sort((a, b) => a - b).join(",");
    const last = this.#last;
    if (last !== undefined && last.roots === key && Date.now() - last.at < REUSE_MS) {
      return last.sizes;
    }
    const sizes = treeResidentBytes(roots);
    this.#last = { at: Date.now(), roots: key, sizes };
    return sizes;
  }
}
