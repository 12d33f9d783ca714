import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, parse, relative, resolve, sep } from "node:path";
import { importPaths } from "./project-instructions-imports.js";
import { isPathScoped, ruleFiles } from "./project-rules.js";

/** Whose instructions a file holds, as Claude Code labels them. */
export type InstructionScope = "user" | "project" | "local";

export interface InstructionFile {
  /** Absolute path, symlinks resolved. */
  path: string;
  scope: InstructionScope;
  text: string;
  /** The file whose `@path` brought this one in. */
  importedBy?: string;
}

export interface ProjectInstructions {
  /** In load order: the user's, then each folder's from `/` down to the workspace. */
  files: InstructionFile[];
  /** One line each: missing or unreadable imports, files cut at the cap, refused imports. */
  warnings: string[];
}

/** Claude Code warns past this size; rudder keeps this much of a bigger file. */
export const INSTRUCTION_CHARACTER_CAP = 40_000;
/** Imports nest at most this deep (Claude Code's limit): the file itself is depth 0. */
export const IMPORT_DEPTH_LIMIT = 5;

/** A folder's CLAUDE files; its `.claude/rules/` come before `CLAUDE.local.md`, as in Claude Code. */
const FOLDER_FILES: ReadonlyArray<{ name: string; scope: InstructionScope }> = [
  { name: "CLAUDE.md", scope: "project" },
  { name: ".claude/CLAUDE.md", scope: "project" },
  { name: "CLAUDE.local.md", scope: "local" },
];

/**
 * Claude Code's instruction files for `workspace`: `~/.claude/CLAUDE.md` and the rules under
 * `~/.claude/rules/`, then in every folder from `/` down to the workspace its `CLAUDE.md`,
 * `.claude/CLAUDE.md`, the rules under `.claude/rules/` (those without `paths` front matter)
 * and `CLAUDE.local.md`, each followed by the files it imports. When none of those folders
 * has a CLAUDE file, their `AGENTS.md` files are read instead (as Claude Code 2.1.328
 * does). An import from a project file that leads outside the folder the file was found
 * in is refused with a warning (Claude Code asks first; rudder has nobody to ask), and a
 * file is read once however often it is named. Never throws.
 */
export function loadProjectInstructions(options: {
  workspace: string;
  home: string;
}): ProjectInstructions {
  const loader = new InstructionLoader(options.home);
  const home = resolve(options.home);
  loader.load(inFolder(home, ".claude/CLAUDE.md"), "user", undefined);
  for (const rule of ruleFiles(inFolder(home, ".claude/rules"))) {
    loader.load(rule, "user", undefined, { rule: true });
  }
  const folders = foldersDownTo(resolve(options.workspace));
  // Rules are not CLAUDE files: a project with only rules still reads its AGENTS.md.
  let claudeFiles = 0;
  for (const folder of folders) {
    for (const { name, scope } of FOLDER_FILES) {
      if (scope === "local") {
        for (const rule of ruleFiles(inFolder(folder, ".claude/rules"))) {
          loader.load(rule, "project", folder, { rule: true });
        }
      }
      if (loader.load(inFolder(folder, name), scope, folder)) claudeFiles += 1;
    }
  }
  if (claudeFiles === 0) {
    for (const folder of folders) loader.load(inFolder(folder, "AGENTS.md"), "project", folder);
  }
  return { files: loader.files, warnings: loader.warnings };
}

/**
 * `name` in the absolute, normalized `folder`. Plain concatenation rather than `join`: the
 * one-shot start-up probes a dozen of these, and the path module's normalization of each is
 * enough work to make V8 compile it with its optimizing compiler (megabytes of peak memory).
 */
function inFolder(folder: string, name: string): string {
  return folder.endsWith(sep) ? `${folder}${name}` : `${folder}${sep}${name}`;
}

/** `/`, then each folder down to `folder` itself. */
function foldersDownTo(folder: string): string[] {
  const folders: string[] = [];
  let current = folder;
  for (;;) {
    folders.unshift(current);
    const parent = dirname(current);
    if (parent === current || current === parse(current).root) return folders;
    current = parent;
  }
}

class InstructionLoader {
  readonly files: InstructionFile[] = [];
  readonly warnings: string[] = [];
  readonly #seen = new Set<string>();
  readonly #home: string;

  constructor(home: string) {
    this.#home = home;
  }

  /**
   * Reads `path` (silently absent when it does not exist) and its imports; true when it was
   * loaded. `root` bounds where a project file's imports may lead; `undefined` (the user's
   * files) leaves them free. A path-scoped `rule` is left out (Claude Code loads it on demand).
   */
  load(
    path: string,
    scope: InstructionScope,
    root: string | undefined,
    kind: { rule?: boolean } = {},
  ): boolean {
    // Most candidates do not exist: a stat that does not throw answers that cheaply.
    if (statSync(path, { throwIfNoEntry: false }) === undefined) return false;
    const real = realPath(path);
    if (real === undefined || this.#seen.has(real)) return false;
    const bound = root === undefined ? undefined : (realPath(root) ?? root);
    return this.#read(real, { scope, root: bound, depth: 0, rule: kind.rule === true });
  }

  #read(
    path: string,
    place: {
      scope: InstructionScope;
      root: string | undefined;
      depth: number;
      by?: string;
      rule?: boolean;
    },
  ): boolean {
    const { scope, root, depth } = place;
    this.#seen.add(path);
    const read = readCapped(path);
    if ("problem" in read) {
      this.warnings.push(`${path}: ${read.problem}; not loaded`);
      return false;
    }
    if (place.rule === true && isPathScoped(read.text)) return false;
    if (read.cut) {
      this.warnings.push(
        `${path} is over ${INSTRUCTION_CHARACTER_CAP.toLocaleString("en-US")} characters; only its start is loaded`,
      );
    }
    this.files.push({
      path,
      scope,
      text: read.text,
      ...(place.by === undefined ? {} : { importedBy: place.by }),
    });
    for (const written of importPaths(read.text)) {
      const target = written.startsWith("~/")
        ? join(this.#home, written.slice(2))
        : resolve(dirname(path), written);
      const real = realPath(target);
      if (real === undefined) {
        this.warnings.push(`${path}: imported file @${written} not found`);
        continue;
      }
      if (this.#seen.has(real)) continue;
      if (depth + 1 > IMPORT_DEPTH_LIMIT) {
        this.warnings.push(
          `${path}: @${written} not loaded: imports nest at most ${IMPORT_DEPTH_LIMIT} deep`,
        );
        continue;
      }
      if (root !== undefined && !isInside(real, root)) {
        this.warnings.push(`${path}: @${written} not loaded: it is outside ${root}`);
        continue;
      }
      this.#read(real, { scope, root, depth: depth + 1, by: path });
    }
    return true;
  }
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function isInside(path: string, folder: string): boolean {
  const way = relative(folder, path);
  return way === "" || (!way.startsWith(`..${sep}`) && way !== ".." && !isAbsolute(way));
}

/** At most the cap's worth of a file (a huge or endless file is never read whole). */
function readCapped(path: string): { text: string; cut: boolean } | { problem: string } {
  let descriptor: number;
  try {
    descriptor = openSync(path, "r");
  } catch (error) {
    return { problem: describe(error) };
  }
  try {
    if (!fstatSync(descriptor).isFile()) return { problem: "not a file" };
    const limit = INSTRUCTION_CHARACTER_CAP * 4;
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    while (length < buffer.length) {
      const count = readSync(descriptor, buffer, length, buffer.length - length, null);
      if (count === 0) break;
      length += count;
    }
    const bytes = buffer.subarray(0, length);
    if (bytes.includes(0)) return { problem: "not a text file" };
    const text = bytes.toString("utf8");
    const cut = length > limit || text.length > INSTRUCTION_CHARACTER_CAP;
    return { text: cut ? text.slice(0, INSTRUCTION_CHARACTER_CAP) : text, cut };
  } catch (error) {
    return { problem: describe(error) };
  } finally {
    closeSync(descriptor);
  }
}

function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "EACCES" ? "permission denied" : code === "EISDIR" ? "not a file" : String(code);
}
