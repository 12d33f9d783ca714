/**
 * Where a channel's worktree is, derived from the repository and the channel id alone (no
 * record in the store): `<root>/<repository folder's name>-<8 hex of its path's SHA-256>/<name>`
 * on branch `rudder/<name>` (worktree-name.ts). The same channel of the same repository finds
 * the same worktree after a restart, and any worker of the machine finds it too, whatever its
 * data folder; the worktree itself, the branch and `git worktree list` are the record. The
 * default root is `worktrees/` in rudder's home (`RUDDER_HOME`, else `~/.rudder`): out of the
 * repository, so its own checkout's `git status` and the sandbox's walk of it never see them.
 */
import { createHash } from "node:crypto";
import { realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { worktreeBranch, worktreeName } from "./worktree-name.js";

export interface WorktreePlace {
  channelId: string;
  /** The repository's top folder (the checkout the binding's folder is in). */
  repository: string;
  /** The worktree's folder. */
  path: string;
  /** Where the agent works: the binding's folder's place inside the worktree. */
  cwd: string;
  branch: string;
}

/** rudder's home's `worktrees/` folder: the default root of every worktree. */
export function defaultWorktreeRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolve(env.RUDDER_HOME ?? join(homedir(), ".rudder")), "worktrees");
}

/** The top folder of the git checkout `folder` is in (the nearest one holding `.git`), or undefined. */
export function repositoryOf(folder: string): string | undefined {
  let current: string;
  try {
    current = realpathSync.native(folder);
  } catch {
    return undefined;
  }
  for (;;) {
    try {
      statSync(join(current, ".git"));
      return current;
    } catch {
      const parent = dirname(current);
      if (parent === current) return undefined;
      current = parent;
    }
  }
}

/** The place of `channelId`'s worktree for a binding folder `folder` in repository `repository`. */
export function worktreePlace(
  root: string,
  repository: string,
  folder: string,
  channelId: string,
): WorktreePlace {
  const key = createHash("sha256").update(repository).digest("hex").slice(0, 8);
  const path = join(
    root,
    `${basename(repository) || "repository"}-${key}`,
    worktreeName(channelId),
  );
  let inside = relative(repository, folder);
  try {
    inside = relative(repository, realpathSync.native(folder));
  } catch {
    // The folder is gone: its place is taken as written.
  }
  return {
    channelId,
    repository,
    path,
    cwd: join(path, inside),
    branch: worktreeBranch(channelId),
  };
}
