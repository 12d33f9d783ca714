import { mkdirSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";

/** What a placeholder of a file that configures MCP servers holds: a valid, empty configuration. */
const FILE_PLACEHOLDER = "{}\n";
/** The protected paths a placeholder stands for, by name (`.git/config` gets none: git would not read `{}`). */
const PLACEHOLDER_KINDS: Record<string, "file" | "folder"> = {
  ".mcp.json": "file",
  ".rudder": "folder",
  ".claude": "folder",
  hooks: "folder",
};

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stand-ins for protected workspace paths that do not exist yet (`.claude/`,
 * `.mcp.json`, ...): a read-only bind needs something to bind, and without
 * one a sandboxed command could create the path. A placeholder is an empty
 * folder, or a file holding `{}`, created on the host before a command and
 * removed when the last command using it ends, if it is still as created (a
 * file the user meanwhile wrote stays). Only paths whose parent folder exists
 * get one (no `.git/hooks` without `.git`, so `git init` still works).
 */
export class Placeholders {
  readonly #users = new Map<string, number>();

  /** Creates what is missing of `paths`; call the returned function when the command ends. */
  acquire(paths: readonly string[]): () => void {
    const held: string[] = [];
    for (const path of paths) {
      const count = this.#users.get(path);
      if (count !== undefined) {
        this.#users.set(path, count + 1);
        held.push(path);
        continue;
      }
      const kind = PLACEHOLDER_KINDS[basename(path)];
      if (kind === undefined || exists(path) || !isFolder(dirname(path))) continue;
      try {
        if (kind === "file") writeFileSync(path, FILE_PLACEHOLDER, { flag: "wx" });
        else mkdirSync(path);
      } catch {
        continue;
      }
      this.#users.set(path, 1);
      held.push(path);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const path of held) this.#release(path);
    };
  }

  #release(path: string): void {
    const count = (this.#users.get(path) ?? 1) - 1;
    if (count > 0) {
      this.#users.set(path, count);
      return;
    }
    this.#users.delete(path);
    removeIfUnchanged(path);
  }

  /** The stand-ins held now. */
  paths(): string[] {
    return [...this.#users.keys()];
  }

  /** Removes every placeholder at once (rudder's exit). Synchronous. */
  removeAll(): void {
    for (const path of this.#users.keys()) removeIfUnchanged(path);
    this.#users.clear();
  }
}

/** Removes a stand-in if it is still as created (an empty folder, a file holding `{}`). */
export function removeIfUnchanged(path: string): void {
  try {
    if (isFolder(path)) rmdirSync(path);
    else if (readFileSync(path, "utf8") === FILE_PLACEHOLDER) unlinkSync(path);
  } catch {
    // Not empty any more, or gone: the user's now.
  }
}
