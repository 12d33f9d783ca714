/**
 * The check after each sandboxed command for anything that would run outside the sandbox
 * later: what a command changed of the workspace's guarded paths (workspace-snapshot.ts) is
 * put back as it was before the command, and what it wrote is moved to a quarantine folder
 * outside the workspace, with a note for the model. A new repository (`git init` inside) is
 * kept when it is inert: its config holds only keys that run nothing (others are removed,
 * git-config-safety.ts) and its hooks folder only git's `.sample` files.
 * The baseline is taken when a command starts while none runs, so a person's own changes
 * between commands stand; a change made while a sandboxed command runs is taken as the
 * command's.
 */
import {
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { CommandHandlers } from "./command-process.js";
import { judgeNewConfig } from "./git-config-safety.js";
import {
  DEFAULT_MAX_FOLDERS,
  differs,
  type GuardedEntry,
  isWithin,
  takeSnapshot,
  type WorkspaceSnapshot,
} from "./workspace-snapshot.js";

/** At most this many paths are named in a note. */
const MAX_NAMED = 8;

export interface WorkspaceGuardOptions {
  /**
   * Where the session's quarantine folder is made. By default a folder of its own made with
   * `mkdtemp` in the system's temporary folder (`rudder-quarantine-<pid>-*`): a fixed shared
   * name there could be another user's, which made every move fail.
   */
  quarantineRoot?: string;
  maxFolders?: number;
  /** Paths rudder itself keeps in the workspace for the sandbox's mounts (placeholders): not the command's doing. */
  own?: () => readonly string[];
}

export class WorkspaceGuard {
  readonly #workspace: string;
  readonly #quarantineRoot: string | undefined;
  readonly #maxFolders: number;
  readonly #own: () => readonly string[];
  #baseline: WorkspaceSnapshot | undefined;
  #running = 0;
  #quarantine: string | undefined;

  constructor(workspace: string, options: WorkspaceGuardOptions = {}) {
    this.#workspace = workspace;
    this.#quarantineRoot = options.quarantineRoot;
    this.#maxFolders = options.maxFolders ?? DEFAULT_MAX_FOLDERS;
    this.#own = options.own ?? (() => []);
  }

  /** The last snapshot taken (the mounts are made from it), if any. */
  get snapshot(): WorkspaceSnapshot | undefined {
    return this.#baseline;
  }

  /** The last snapshot, taken now if there is none yet (a sandbox started ahead of any command). */
  prime(): WorkspaceSnapshot {
    this.#baseline ??= takeSnapshot(this.#workspace, this.#maxFolders);
    return this.#baseline;
  }

  /** A sandboxed command is about to start. */
  begin(): void {
    if (this.#running === 0 || this.#baseline === undefined) {
      this.#baseline = takeSnapshot(this.#workspace, this.#maxFolders, this.#baseline);
    }
    this.#running += 1;
  }

  /**
   * Puts back what changed since the baseline; `ended` when the command's last process has
   * closed (an earlier check at its shell's exit passes false). Returns the note for the
   * model, or undefined when nothing had to be put back. Never throws.
   */
  check(ended: boolean): string | undefined {
    if (ended) this.#running = Math.max(0, this.#running - 1);
    const before = this.#baseline;
    if (before === undefined) return undefined;
    let repaired: string[];
    try {
      const after = takeSnapshot(this.#workspace, this.#maxFolders, before);
      repaired = this.#repair(before, after);
      this.#baseline =
        repaired.length === 0 ? after : takeSnapshot(this.#workspace, this.#maxFolders, after);
    } catch (error) {
      return `[sandbox] the check of git metadata and auto-run files failed: ${(error as Error).message}`;
    }
    if (repaired.length === 0) return undefined;
    const named = repaired.slice(0, MAX_NAMED).join(", ");
    const more = repaired.length > MAX_NAMED ? ` and ${repaired.length - MAX_NAMED} more` : "";
    return (
      "[sandbox] this command changed files that make programs outside the sandbox run " +
      "commands (git's config, hooks and other control files, editor tasks, hook managers, " +
      `direnv, package-manager and agent settings); they were put back: ${named}${more}. ` +
      (this.#quarantine === undefined
        ? "What the command wrote could not be kept and was removed. "
        : `What the command wrote is kept in ${this.#quarantine}. `) +
      "Such files are changed with " +
      "write_file or edit_file, which ask the user first."
    );
  }

  #repair(before: WorkspaceSnapshot, after: WorkspaceSnapshot): string[] {
    const actions: string[] = [];
    const newGit = [...after.gitDirectories].filter((path) => !before.gitDirectories.has(path));
    const changed: string[] = [];
    const own = new Set(this.#own());
    for (const [path, entry] of after.entries) {
      if (own.has(path)) continue;
      const old = before.entries.get(path);
      if (old === undefined) {
        if (!this.#acceptNew(path, entry, newGit, actions)) changed.push(path);
      } else if (differs(old, entry)) changed.push(path);
    }
    const moved: string[] = [];
    for (const path of changed.sort()) {
      if (moved.some((folder) => isWithin(path, folder))) continue;
      this.#moveAway(path);
      moved.push(path);
      actions.push(`${this.#relative(path)}${before.entries.has(path) ? " (changed)" : ""}`);
    }
    // By code unit, so a folder comes before what is in it (and no locale's collator is loaded:
    // `localeCompare` costs ~9 ms the first time, at the end of a session's first command).
    for (const [path, entry] of [...before.entries].sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    )) {
      if (own.has(path)) continue;
      if (after.entries.has(path) && !moved.some((folder) => isWithin(path, folder))) continue;
      if (restore(path, entry) && !moved.some((folder) => isWithin(path, folder))) {
        actions.push(`${this.#relative(path)} (removed)`);
      }
    }
    return actions;
  }

  /** Whether a new path inside a new repository is inert (its config made so, if need be). */
  #acceptNew(path: string, entry: GuardedEntry, newGit: string[], actions: string[]): boolean {
    const repository = newGit.find((folder) => path !== folder && isWithin(path, folder));
    if (repository === undefined) return false;
    const inside = path.slice(repository.length + 1);
    if ((inside === "hooks" || inside === "modules") && entry.kind === "folder") return true;
    if (inside.startsWith("hooks/") && !inside.slice(6).includes("/")) {
      return entry.kind === "file" && inside.endsWith(".sample");
    }
    if (inside !== "config" || entry.kind !== "file") return false;
    const judged = judgeNewConfig(path);
    if (judged.kind === "safe") return true;
    if (judged.kind === "unreadable") return false;
    this.#moveAway(path);
    writeFileSync(path, judged.content);
    actions.push(`${this.#relative(path)} (without ${judged.dropped.join(", ")})`);
    return true;
  }

  #relative(path: string): string {
    return relative(this.#workspace, path) || ".";
  }

  /**
   * Moves `path` into this session's quarantine folder, keeping its place in the workspace.
   * Fails closed: what cannot be kept there is removed all the same.
   */
  #moveAway(path: string): void {
    try {
      this.#keep(path);
    } catch {
      rmSync(path, { recursive: true, force: true });
    }
  }

  #keep(path: string): void {
    if (this.#quarantine === undefined) {
      const root = this.#quarantineRoot;
      if (root === undefined) {
        this.#quarantine = mkdtempSync(join(tmpdir(), `rudder-quarantine-${process.pid}-`));
      } else {
        mkdirSync(root, { recursive: true, mode: 0o700 });
        this.#quarantine = join(root, `${process.pid}-${Date.now()}`);
      }
    }
    let target = join(this.#quarantine, this.#relative(path));
    for (let count = 1; existsQuietly(target); count += 1) {
      target = `${join(this.#quarantine, this.#relative(path))}.${count}`;
    }
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    try {
      renameSync(path, target);
    } catch {
      cpSync(path, target, { recursive: true, verbatimSymlinks: true });
      rmSync(path, { recursive: true, force: true });
    }
  }
}

function existsQuietly(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Puts a guarded path back as it was recorded; whether anything was written. */
function restore(path: string, entry: GuardedEntry): boolean {
  try {
    if (existsQuietly(path)) return false;
    mkdirSync(dirname(path), { recursive: true });
    if (entry.kind === "folder") mkdirSync(path, { mode: entry.mode & 0o777 });
    else if (entry.kind === "link" && entry.target !== undefined) symlinkSync(entry.target, path);
    else if (entry.kind === "file" && entry.content !== undefined) {
      writeFileSync(path, entry.content, { mode: entry.mode & 0o777 });
    } else return false;
    return true;
  } catch {
    return false;
  }
}

/**
 * `handlers` with the workspace guard's check at the shell's exit and again when the
 * command's last process has closed; what it had to put back is told in the output.
 */
export function guardedHandlers(guard: WorkspaceGuard, handlers: CommandHandlers): CommandHandlers {
  let closed = false;
  const tell = (note: string | undefined): void => {
    if (note !== undefined) handlers.onData(2, Buffer.from(`\n${note}\n`));
  };
  return {
    onData: handlers.onData,
    onError: handlers.onError,
    onExit: (code, signal) => {
      tell(guard.check(false));
      handlers.onExit(code, signal);
    },
    onClose: () => {
      if (!closed) {
        closed = true;
        tell(guard.check(true));
      }
      handlers.onClose();
    },
  };
}
