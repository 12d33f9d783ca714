import { type Dirent, readdir } from "node:fs";
import type { CompiledGlob } from "./glob-pattern.js";

/**
 * Per pattern, how far a directory is into it: the number of leading segments
 * its path has matched, FREE once a `**` is reached (anything below may match),
 * or DEAD when nothing below can.
 */
const FREE = -1;
const DEAD = -2;

/** Names never listed or entered. */
const SKIPPED_NAMES = new Set([".git"]);

/**
 * Appends to `matches` the files under `root` (absolute) that match any of
 * `globs`, all of which share the same base, as `prefix` + their POSIX path
 * relative to `root`. Directories are entered only while some pattern can
 * still match below them; symbolic links are listed but never followed.
 * Unreadable directories are skipped. Rejects when the signal aborts.
 */
export function walkGlob(
  root: string,
  prefix: string,
  globs: CompiledGlob[],
  signal: AbortSignal,
  matches: string[] = [],
): Promise<string[]> {
  const initial = globs.map((glob) => advance(glob, 0));
  return new Promise((resolve, reject) => {
    let pending = 0;
    const visit = (directory: string, relative: string, states: number[]): void => {
      pending += 1;
      readdir(directory, { withFileTypes: true }, (error, entries) => {
        pending -= 1;
        if (signal.aborted) {
          if (pending === 0) reject(signal.reason);
          return;
        }
        if (!error) scan(directory, relative, states, entries);
        if (pending === 0) resolve(matches);
      });
    };
    const scan = (
      directory: string,
      relative: string,
      states: number[],
      entries: Dirent[],
    ): void => {
      const below = relative === "" ? "" : `${relative}/`;
      for (const entry of entries) {
        const name = entry.name;
        if (SKIPPED_NAMES.has(name)) continue;
        if (entry.isDirectory()) {
          const next = childStates(globs, states, name);
          if (next !== undefined) visit(`${directory}/${name}`, below + name, next);
        } else if (fileMatches(globs, states, below, name)) {
          matches.push(prefix + below + name);
        }
      }
    };
    visit(root, "", initial);
  });
}

/** The state after matching `index` segments, FREE once the next one is `**`. */
function advance(glob: CompiledGlob, index: number): number {
  const segment = glob.segments[index];
  if (segment === undefined) return DEAD;
  return segment.globstar ? FREE : index;
}

/** States for a subdirectory `name`, or undefined if no pattern can match below it. */
function childStates(globs: CompiledGlob[], states: number[], name: string): number[] | undefined {
  let alive = false;
  const next = states.map((state, at) => {
    if (state === FREE) {
      alive = true;
      return FREE;
    }
    if (state === DEAD) return DEAD;
    const glob = globs[at]!;
    const segment = glob.segments[state];
    if (segment === undefined || segment.globstar || state === glob.segments.length - 1)
      return DEAD;
    if (!segment.matcher.test(name)) return DEAD;
    const advanced = advance(glob, state + 1);
    if (advanced !== DEAD) alive = true;
    return advanced;
  });
  return alive ? next : undefined;
}

function fileMatches(
  globs: CompiledGlob[],
  states: number[],
  prefix: string,
  name: string,
): boolean {
  for (let at = 0; at < globs.length; at += 1) {
    const state = states[at]!;
    const glob = globs[at]!;
    if (state === FREE) {
      if (glob.anythingAfterGlobstar) return true;
      if (glob.nameAfterGlobstar !== undefined) {
        if (glob.nameAfterGlobstar.test(name)) return true;
      } else if (glob.regex.test(prefix + name)) {
        return true;
      }
    } else if (state === glob.segments.length - 1) {
      const segment = glob.segments[state]!;
      if (!segment.globstar && segment.matcher.test(name)) return true;
    }
  }
  return false;
}
