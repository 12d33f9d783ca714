/**
 * What of a workspace can make the host run something: every git directory (found by its
 * shape, as git finds one: HEAD, objects/, refs/; at any depth, a submodule's under
 * `modules/` too) with its control entries (git-layout.ts), the folders their
 * `core.hooksPath` names, `.git` files, and the auto-run files and folders
 * (auto-run-files.ts). A snapshot records each such path's kind, identity and (up to a size)
 * content, so a later snapshot tells what changed and an earlier one can put it back.
 * The walk skips `node_modules` and stops after `maxFolders` folders (`complete` says so).
 * It lists a folder again only when the folder changed since the previous snapshot (its inode or
 * change time differ, which no command can set back) or changed too near that walk to be sure
 * (a timestamp is as coarse as the kernel's clock tick or the filesystem's, as git's index
 * knows racily clean files): a folder's entries change only with its change time, so a walk
 * after a command costs a `stat` per unchanged folder rather than a listing.
 * A workspace that is a linked worktree (its `.git` a file naming `<common>/worktrees/<name>`)
 * has that git directory judged the same way, and the common directory's work folders
 * (objects, refs, logs) listed to be writable, so that git works in it as in any checkout.
 */
import {
  type Dirent,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
} from "node:fs";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { AUTO_RUN_FILES, AUTO_RUN_FOLDERS } from "./auto-run-files.js";
import { hooksPathOf, isGitWork, looksLikeGitDirectory } from "./git-layout.js";

export interface GuardedEntry {
  kind: "file" | "folder" | "link" | "other";
  mode: number;
  size: number;
  /** The inode's change time: unlike the modification time, no command can set it back. */
  ctimeMs: number;
  ino: number;
  /** A file's bytes, when it is small enough to put back. */
  content?: Buffer;
  /** A link's target. */
  target?: string;
}

export interface WorkspaceSnapshot {
  /** Guarded paths (absolute) and what they were. */
  entries: Map<string, GuardedEntry>;
  /** Git directories found (absolute). */
  gitDirectories: Set<string>;
  /** Folders named by some git directory's `core.hooksPath`, inside the workspace. */
  hookFolders: Set<string>;
  /** The common git directory's work folders of the workspace as a linked worktree (`linkedWorktree`). */
  sharedWork: Set<string>;
  /** False when the walk stopped at its bound. */
  complete: boolean;
  /** What the walk kept of each plain folder's listing, for the next walk (`FolderListing`). */
  folders: Map<string, FolderListing>;
}

/** The entries of a plain folder (not a git directory) that the walk acts on, and when it was listed. */
export interface FolderListing {
  ino: number;
  ctimeMs: number;
  /** Changed so near its listing that a later change could carry the same time: list again. */
  racy: boolean;
  /** `.git`, auto-run names and subfolders, in listing order. */
  entries: { name: string; folder: boolean }[];
}

/** A folder changed less than this long before a walk may change again with the same time. */
const RACY_MS = 2000;

/** Files up to this size are kept to be put back. */
const MAX_KEPT_BYTES = 256 * 1024;
export const DEFAULT_MAX_FOLDERS = 20_000;

function entryOf(
  path: string,
  previous: ReadonlyMap<string, GuardedEntry> | undefined,
): GuardedEntry | undefined {
  try {
    const stats = lstatSync(path);
    const kind = stats.isFile()
      ? "file"
      : stats.isDirectory()
        ? "folder"
        : stats.isSymbolicLink()
          ? "link"
          : "other";
    const entry: GuardedEntry = {
      kind,
      mode: stats.mode,
      size: stats.size,
      ctimeMs: stats.ctimeMs,
      ino: stats.ino,
    };
    if (kind === "file" && stats.size <= MAX_KEPT_BYTES) {
      const known = previous?.get(path);
      entry.content =
        known?.content !== undefined && !differs(known, entry) ? known.content : readFileSync(path);
    }
    if (kind === "link") entry.target = readlinkSync(path);
    return entry;
  } catch {
    return undefined;
  }
}

function listing(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * An entry's path in a folder found by the walk (absolute and normalized, so joining is
 * appending): path.join's normalizing, called for every entry, made a one-shot run's path work
 * grow with the workspace (test/cli/run-footprint.test.ts counts it).
 */
function childPath(folder: string, name: string): string {
  return folder.endsWith("/") ? `${folder}${name}` : `${folder}/${name}`;
}

/** Whether `path` is `folder` or below it (both absolute and normalized). */
export function isWithin(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
}

/**
 * The guarded paths of `workspace` now. A file's bytes recorded in `previous` are taken from
 * there when the file is the same inode, unchanged since (its change time), rather than read.
 */
export function takeSnapshot(
  workspace: string,
  maxFolders = DEFAULT_MAX_FOLDERS,
  previous?: WorkspaceSnapshot,
): WorkspaceSnapshot {
  const known = previous?.entries;
  const snapshot: WorkspaceSnapshot = {
    entries: new Map(),
    gitDirectories: new Set(),
    hookFolders: new Set(),
    sharedWork: new Set(),
    complete: true,
    folders: new Map(),
  };
  const racyFrom = Date.now() - RACY_MS;
  let folders = 0;
  const budget = (): boolean => {
    folders += 1;
    if (folders > maxFolders) snapshot.complete = false;
    return snapshot.complete;
  };
  const record = (path: string): void => {
    const entry = entryOf(path, known);
    if (entry === undefined) return;
    snapshot.entries.set(path, entry);
    if (entry.kind === "folder" && budget()) {
      for (const child of listing(path)) record(childPath(path, child.name));
    }
  };
  const gitDirectory = (path: string, entries: Dirent[]): void => {
    snapshot.gitDirectories.add(path);
    for (const entry of entries) {
      const child = childPath(path, entry.name);
      if (isGitWork(entry.name)) continue;
      if (entry.name === "modules" && entry.isDirectory()) {
        const modules = entryOf(child, known);
        if (modules !== undefined) snapshot.entries.set(child, modules);
        for (const module of listing(child)) visitModule(childPath(child, module.name));
        continue;
      }
      record(child);
    }
    const workTree = basename(path) === ".git" ? dirname(path) : path;
    const hooks = hooksPathOf(path, workTree);
    if (hooks !== undefined && isWithin(hooks, workspace) && hooks !== workspace) {
      snapshot.hookFolders.add(hooks);
      record(hooks);
    }
  };
  const visitModule = (path: string): void => {
    const entries = listing(path);
    if (looksLikeGitDirectory(new Set(entries.map((entry) => entry.name)))) {
      if (budget()) gitDirectory(path, entries);
    } else record(path);
  };
  /**
   * The workspace's own `.git` file (only the top one: one an agent plants is put back by the
   * check before any mount is made from it) naming a worktree's git directory outside.
   */
  const linkedWorktree = (dotGit: string): void => {
    const linked = linkedGitDirectory(dotGit);
    if (linked === undefined || isWithin(linked.gitDirectory, workspace)) return;
    if (!budget()) return;
    gitDirectory(linked.gitDirectory, listing(linked.gitDirectory));
    for (const name of ["objects", "refs", "logs"]) {
      const path = childPath(linked.common, name);
      if (existsSync(path)) snapshot.sharedWork.add(path);
    }
  };
  /** The folder's entries that matter, from the previous walk when it cannot have changed. */
  const plainListing = (folder: string): FolderListing["entries"] | undefined => {
    let stats: { ino: number; ctimeMs: number } | undefined;
    try {
      stats = statSync(folder);
    } catch {
      stats = undefined;
    }
    const cached = previous?.folders.get(folder);
    if (
      stats !== undefined &&
      cached !== undefined &&
      !cached.racy &&
      cached.ino === stats.ino &&
      cached.ctimeMs === stats.ctimeMs
    ) {
      snapshot.folders.set(folder, cached);
      return cached.entries;
    }
    const entries = listing(folder);
    if (looksLikeGitDirectory(new Set(entries.map((entry) => entry.name)))) {
      gitDirectory(folder, entries);
      return undefined;
    }
    const kept = entries
      .filter(
        (entry) =>
          entry.name === ".git" ||
          AUTO_RUN_FOLDERS.has(entry.name) ||
          AUTO_RUN_FILES.has(entry.name) ||
          (entry.isDirectory() && entry.name !== "node_modules"),
      )
      .map((entry) => ({ name: entry.name, folder: entry.isDirectory() }));
    if (stats !== undefined) {
      const racy = stats.ctimeMs >= racyFrom;
      snapshot.folders.set(folder, { ino: stats.ino, ctimeMs: stats.ctimeMs, racy, entries: kept });
    }
    return kept;
  };
  const visit = (folder: string): void => {
    if (!budget()) return;
    const entries = plainListing(folder);
    if (entries === undefined) return;
    for (const entry of entries) {
      const path = childPath(folder, entry.name);
      if (entry.name === ".git") {
        if (entry.folder) {
          const inner = listing(path);
          if (looksLikeGitDirectory(new Set(inner.map((item) => item.name)))) {
            gitDirectory(path, inner);
          } else record(path);
        } else {
          record(path);
          if (folder === workspace) linkedWorktree(path);
        }
      } else if (AUTO_RUN_FOLDERS.has(entry.name) || AUTO_RUN_FILES.has(entry.name)) {
        record(path);
      } else if (entry.folder) {
        visit(path);
      }
    }
  };
  visit(workspace);
  return snapshot;
}

/**
 * The git directory a `.git` file names (`gitdir: <path>`) and its common directory, when it
 * is a linked worktree's (it holds `commondir`); undefined otherwise.
 */
export function linkedGitDirectory(
  dotGit: string,
): { gitDirectory: string; common: string } | undefined {
  try {
    const line = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, "utf8"))?.[1];
    if (line === undefined) return undefined;
    const gitDirectory = resolve(dirname(dotGit), line);
    const common = readFileSync(`${gitDirectory}/commondir`, "utf8").trim();
    return {
      gitDirectory,
      common: isAbsolute(common) ? resolve(common) : resolve(gitDirectory, common),
    };
  } catch {
    return undefined;
  }
}

/** Whether two records of a path differ: another inode, or the same one changed since. */
export function differs(before: GuardedEntry, after: GuardedEntry): boolean {
  if (before.kind !== after.kind || before.mode !== after.mode) return true;
  if (before.kind === "folder") return false;
  if (before.target !== after.target || before.size !== after.size) return true;
  return before.ino !== after.ino || before.ctimeMs !== after.ctimeMs;
}

/**
 * The mounts that keep a snapshot's guarded paths as they are inside the sandbox: each git
 * directory bound over itself (a mount point cannot be renamed or removed, so `.git` cannot be
 * swapped for a rebuilt one), and read-only over it each of its existing control entries
 * (`modules` aside: its repositories are git directories of their own), each hooks folder and
 * each existing auto-run file or folder; a linked worktree's shared work folders bound writable
 * too. New ones cannot be mounted; the check after each
 * command takes care of them. `mountedAnyway` (the policy's protected paths, which have
 * stand-ins) is left out, so that a stand-in appearing does not change the mounts.
 */
export function guardMounts(
  snapshot: WorkspaceSnapshot,
  mountedAnyway: ReadonlySet<string> = new Set(),
): { bound: string[]; readOnly: string[] } {
  const bound = [...snapshot.gitDirectories, ...snapshot.sharedWork].sort();
  const readOnly: string[] = [];
  for (const [path, entry] of snapshot.entries) {
    if ((entry.kind !== "file" && entry.kind !== "folder") || mountedAnyway.has(path)) continue;
    const parent = dirname(path);
    const name = basename(path);
    const control = snapshot.gitDirectories.has(parent) && name !== "modules";
    const autoRun =
      (AUTO_RUN_FOLDERS.has(name) || AUTO_RUN_FILES.has(name) || name === ".git") &&
      ![...snapshot.gitDirectories].some((folder) => isWithin(parent, folder));
    if (control || autoRun || snapshot.hookFolders.has(path)) readOnly.push(path);
  }
  return { bound, readOnly: readOnly.sort() };
}
