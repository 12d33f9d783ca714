// The process tree an agent leaves is found from each process's children files, as the full scan
// of /proc by parent links finds it: the same processes, grandchildren included.
import { describe, expect, it } from "vitest";
import { descendantsByParentLinks, listDescendants } from "../../src/claude-cli/process-tree.js";
import { startProcess, stopProcess } from "../helpers/owned-process.js";
import { waitFor } from "../helpers/wait-for.js";

describe("listDescendants", () => {
  it("finds children and grandchildren, as the scan by parent links does", async () => {
    // Two sleeps of its own and a shell with one of its own: four descendants.
    const tree = startProcess("sh", ["-c", "sleep 30 & sleep 30 & sh -c 'sleep 30 & wait' & wait"]);
    try {
      const root = tree.child.pid ?? 0;
      const found = await waitFor(() => {
        const descendants = listDescendants(root);
        return descendants.length === 4 ? descendants : undefined;
      }, "the shell's four descendants");
      const byPid = (entries: Array<{ pid: number; startTime: string }>) =>
        [...entries].sort((left, right) => left.pid - right.pid);
      expect(byPid(found)).toEqual(byPid(descendantsByParentLinks(root)));
      expect(listDescendants(2 ** 22 + 1)).toEqual([]);
    } finally {
      await stopProcess(tree, 0);
    }
  });
});
