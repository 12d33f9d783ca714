/**
 * The channels' worktrees: for a channel whose binding asks for isolation (`isolatedFolder`
 * gives the binding's folder) and whose folder is in a git checkout, its agent works in a
 * worktree of its own on branch `rudder/<name>` (worktree-place.ts says where), made from the
 * repository's HEAD on the channel's first turn (`prepare`), listed with its state (`status`),
 * and removed on a reset (`remove`): never with uncommitted work unless confirmed, and its
 * branch deleted only when merged (`git branch -d`). git runs as a child process (run-git.ts).
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { runGit } from "./run-git.js";
import { repositoryOf, type WorktreePlace, worktreePlace } from "./worktree-place.js";

/** A worktree as `GET /api/channels` lists it. */
export interface WorktreeStatus {
  path: string;
  branch: string;
  /** `dirty`: files changed, added or untracked, not committed. */
  state: "clean" | "dirty";
  /** Paths with uncommitted changes. */
  changes: number;
  /** Commits on the branch that the repository's HEAD (its own checkout) lacks, and back. */
  ahead: number | null;
  behind: number | null;
}

/** What removing a channel's worktree did, or why it did not. */
export type WorktreeRemoval =
  | { removed: false; reason: "none" }
  | { removed: false; reason: "needs_confirmation"; path: string; changes: number }
  | { removed: false; reason: "failed"; path: string; error: string }
  | { removed: true; path: string; branch: string; branchKept: boolean };

export interface ChannelWorktreesOptions {
  /** The binding's folder when the channel's binding says `"isolation": "worktree"`, else undefined. */
  isolatedFolder: (channelId: string) => string | undefined;
  /** Where worktrees are made (`defaultWorktreeRoot()`). */
  root: string;
  logger?: (line: string) => void;
}

/** How long a status is reused: the page asks for the channels every few seconds. */
const STATUS_TTL_MS = 2000;

export class ChannelWorktrees {
  readonly #options: ChannelWorktreesOptions;
  readonly #repositories = new Map<string, string | undefined>();
  /** Work on a worktree (made, removed) in flight, one at a time per channel. */
  readonly #busy = new Map<string, Promise<unknown>>();
  readonly #statuses = new Map<string, { at: number; status: Promise<WorktreeStatus | null> }>();

  constructor(options: ChannelWorktreesOptions) {
    this.#options = options;
  }

  /** The channel's worktree place, or undefined when it works in its binding's folder as it is. */
  place(channelId: string): WorktreePlace | undefined {
    const folder = this.#options.isolatedFolder(channelId);
    if (folder === undefined) return undefined;
    if (!this.#repositories.has(folder)) this.#repositories.set(folder, repositoryOf(folder));
    const repository = this.#repositories.get(folder);
    if (repository === undefined) return undefined;
    return worktreePlace(this.#options.root, repository, folder, channelId);
  }

  /** The folder the channel's agent starts in, when it has a worktree place. */
  cwdFor(channelId: string): string | undefined {
    return this.place(channelId)?.cwd;
  }

  /**
   * Makes the channel's worktree if it has a place and none is there yet. Resolves with why it
   * could not (one line), or undefined when the agent may start.
   */
  prepare(channelId: string): Promise<string | undefined> {
    const place = this.place(channelId);
    if (place === undefined || existsSync(join(place.path, ".git"))) {
      return Promise.resolve(undefined);
    }
    return this.#serial(channelId, () => this.#make(place));
  }

  async #make(place: WorktreePlace): Promise<string | undefined> {
    if (existsSync(join(place.path, ".git"))) return undefined;
    const { repository, path, branch } = place;
    mkdirSync(dirname(path), { recursive: true });
    // A worktree whose folder was deleted by hand is still registered: forget it first.
    await runGit(["worktree", "prune"], { cwd: repository });
    const known = await runGit(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], {
      cwd: repository,
    });
    const args =
      known.code === 0
        ? ["worktree", "add", "--quiet", path, branch]
        : ["worktree", "add", "--quiet", "-b", branch, path, "HEAD"];
    const made = await runGit(args, { cwd: repository });
    if (made.code !== 0) {
      const why = made.stderr.trim().split("\n").pop() ?? `exit code ${made.code}`;
      return `could not make the channel's worktree ${path} (branch ${branch}) in ${repository}: ${why}`;
    }
    this.#statuses.delete(place.channelId);
    this.#options.logger?.(
      `gateway: channel ${place.channelId} works in worktree ${path} on branch ${branch}`,
    );
    return undefined;
  }

  /** The state of the channel's worktree; null when it has none (yet). Reused for 2 s. */
  status(channelId: string): Promise<WorktreeStatus | null> {
    const place = this.place(channelId);
    if (place === undefined || !existsSync(join(place.path, ".git"))) return Promise.resolve(null);
    const cached = this.#statuses.get(channelId);
    if (cached !== undefined && Date.now() - cached.at < STATUS_TTL_MS) return cached.status;
    const status = readStatus(place);
    this.#statuses.set(channelId, { at: Date.now(), status });
    return status;
  }

  /** The channel's worktree and its uncommitted paths, when it has one with any; else null. */
  async uncommitted(channelId: string): Promise<{ path: string; changes: number } | null> {
    const place = this.place(channelId);
    if (place === undefined || !existsSync(join(place.path, ".git"))) return null;
    const changes = await changedPaths(place.path);
    return changes ? { path: place.path, changes } : null;
  }

  /**
   * Removes the channel's worktree (its agent is stopped first by the caller). With
   * uncommitted work it refuses unless `confirm`; the branch is deleted only when merged into
   * the repository's HEAD, else kept.
   */
  remove(channelId: string, confirm: boolean): Promise<WorktreeRemoval> {
    const place = this.place(channelId);
    if (place === undefined || !existsSync(join(place.path, ".git"))) {
      return Promise.resolve({ removed: false, reason: "none" });
    }
    return this.#serial(channelId, () => this.#remove(place, confirm));
  }

  async #remove(place: WorktreePlace, confirm: boolean): Promise<WorktreeRemoval> {
    const { path, branch, repository } = place;
    this.#statuses.delete(place.channelId);
    const changes = await changedPaths(path);
    if (changes === null) {
      return { removed: false, reason: "failed", path, error: "git status failed in the worktree" };
    }
    if (changes > 0 && !confirm) {
      return { removed: false, reason: "needs_confirmation", path, changes };
    }
    const force = changes > 0 ? ["--force"] : [];
    const removed = await runGit(["worktree", "remove", ...force, path], { cwd: repository });
    if (removed.code !== 0) {
      return { removed: false, reason: "failed", path, error: removed.stderr.trim() };
    }
    const deleted = await runGit(["branch", "-d", branch], { cwd: repository });
    this.#options.logger?.(
      `gateway: removed channel ${place.channelId}'s worktree ${path}` +
        (deleted.code === 0 ? ` and its merged branch ${branch}` : `; branch ${branch} kept`),
    );
    return { removed: true, path, branch, branchKept: deleted.code !== 0 };
  }

  #serial<T>(channelId: string, work: () => Promise<T>): Promise<T> {
    const before = this.#busy.get(channelId) ?? Promise.resolve();
    const next = before.then(work, work);
    const kept = next.catch(() => {});
    this.#busy.set(channelId, kept);
    void kept.then(() => {
      if (this.#busy.get(channelId) === kept) this.#busy.delete(channelId);
    });
    return next;
  }
}

/** Paths `git status` lists (changed, staged, untracked); null when it failed. */
async function changedPaths(path: string): Promise<number | null> {
  const status = await runGit(["status", "--porcelain=v1", "-z", "--untracked-files=all"], {
    cwd: path,
  });
  if (status.code !== 0) return null;
  // -z: entries end with NUL; a rename's entry is followed by its old path, which is not counted.
  let count = 0;
  const parts = status.stdout.split("\0");
  for (let index = 0; index < parts.length; index += 1) {
    const entry = parts[index] ?? "";
    if (entry === "") continue;
    count += 1;
    if (entry.startsWith("R") || entry.startsWith("C")) index += 1;
  }
  return count;
}

async function readStatus(place: WorktreePlace): Promise<WorktreeStatus | null> {
  const [changes, counts] = await Promise.all([
    changedPaths(place.path),
    runGit(["rev-list", "--left-right", "--count", "HEAD...main-worktree/HEAD"], {
      cwd: place.path,
    }),
  ]);
  if (changes === null) return null;
  const [ahead, behind] = counts.code === 0 ? counts.stdout.trim().split(/\s+/).map(Number) : [];
  return {
    path: place.path,
    branch: place.branch,
    state: changes > 0 ? "dirty" : "clean",
    changes,
    ahead: ahead ?? null,
    behind: behind ?? null,
  };
}
