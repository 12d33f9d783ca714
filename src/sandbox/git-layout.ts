/**
 * What of a git directory is work and what is control. git writes its work (objects, refs,
 * the index, HEAD, logs, the messages and states of merges and rebases, lock files) as a
 * command runs; everything else there (config, config.worktree, hooks, commondir, worktrees,
 * anything git would read later that is not on the work list) tells the host's git what to
 * run, so the sandbox keeps it read-only and puts back what changes. A submodule's git
 * directory under `modules/` is a git directory of its own, judged the same way.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

/** Top-level names of a git directory that git writes as it works. */
const WORK_NAMES = new Set([
  "objects",
  "refs",
  "logs",
  "index",
  "HEAD",
  "ORIG_HEAD",
  "FETCH_HEAD",
  "MERGE_HEAD",
  "MERGE_MSG",
  "MERGE_MODE",
  "MERGE_RR",
  "AUTO_MERGE",
  "CHERRY_PICK_HEAD",
  "REVERT_HEAD",
  "REBASE_HEAD",
  "BISECT_LOG",
  "BISECT_START",
  "BISECT_TERMS",
  "BISECT_EXPECTED_REV",
  "BISECT_ANCESTORS_OK",
  "BISECT_NAMES",
  "BISECT_RUN",
  "COMMIT_EDITMSG",
  "TAG_EDITMSG",
  "SQUASH_MSG",
  "NOTES_MERGE_PARTIAL",
  "NOTES_MERGE_REF",
  "packed-refs",
  "shallow",
  "description",
  "info",
  "branches",
  "rebase-merge",
  "rebase-apply",
  "sequencer",
  "rr-cache",
  "lost-found",
  "gc.log",
  "gc.pid",
]);

/** Whether a top-level entry of a git directory is git's work (written freely) rather than control. */
export function isGitWork(name: string): boolean {
  return WORK_NAMES.has(name) || name.endsWith(".lock") || name.startsWith("sharedindex.");
}

/** Whether a folder's entries make it a git directory, as git's own test does (HEAD, objects/, refs/). */
export function looksLikeGitDirectory(names: ReadonlySet<string>): boolean {
  return names.has("HEAD") && names.has("objects") && names.has("refs");
}

/**
 * The folder `core.hooksPath` of `gitDirectory`'s config names (relative to `workTree`), or
 * undefined. Read by hand, leniently: any `hookspath = X` line in a `[core]` section. A
 * spelling this misses is still control of a git directory, which stays read-only.
 */
export function hooksPathOf(gitDirectory: string, workTree: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(`${gitDirectory}/config`, "utf8");
  } catch {
    return undefined;
  }
  let section = "";
  let found: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const header = /^\[\s*([^\]\s"]+)/.exec(line);
    if (header !== null) section = (header[1] ?? "").toLowerCase();
    const entry = /^hookspath\s*=\s*(.*)$/i.exec(line.replace(/^\[[^\]]*\]\s*/, ""));
    if (section === "core" && entry !== null) found = (entry[1] ?? "").replace(/^"|"$/g, "");
  }
  if (found === undefined || found === "") return undefined;
  return isAbsolute(found) ? found : resolve(workTree, found);
}
