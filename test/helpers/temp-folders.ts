/**
 * Temporary folders for tests, one way everywhere: a fresh folder under the system's temporary
 * folder (its real path, symlinks resolved, so that paths the code under test prints compare
 * equal), and a test's home: that folder holding `work/` (the workspace) and `home/` (HOME).
 * Each comes with its `remove`; nothing here registers hooks (a helper module is imported once
 * per worker, files share workers), the caller removes it in its own `afterEach`/`afterAll`.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempFolder {
  path: string;
  /** Removes the folder and everything in it; removing it twice is no error. */
  remove(): void;
}

/** A fresh folder named `prefix` and six random characters, under `parent` (the system's). */
export function tempFolder(prefix: string, parent = tmpdir()): TempFolder {
  const path = realpathSync(mkdtempSync(join(parent, prefix)));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface TempHome {
  /** The test's folder; also a fine TMPDIR for the programs it starts. */
  root: string;
  /** `root/work`: the folder the agent works in. */
  workspace: string;
  /** `root/home`: HOME for the programs it starts. */
  home: string;
  remove(): void;
}

/** A fresh folder (see `tempFolder`) with `work/` and `home/` made in it. */
export function tempHome(prefix: string, parent = tmpdir()): TempHome {
  const { path: root, remove } = tempFolder(prefix, parent);
  const workspace = join(root, "work");
  const home = join(root, "home");
  mkdirSync(workspace);
  mkdirSync(home);
  return { root, workspace, home, remove };
}
