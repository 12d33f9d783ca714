import { type Dirent, readdirSync } from "node:fs";

/**
 * Claude Code's rule files: every `.md` file under a `.claude/rules/` folder, at any depth.
 * A rule whose front matter names `paths` applies only to matching files, which Claude Code
 * loads when it reads one; rudder does not load those (yet), only the unconditional ones.
 */

/** At most this many rule files per folder, and this deep: a runaway tree costs nothing. */
const MAX_RULE_FILES = 200;
const MAX_RULE_DEPTH = 8;

/**
 * The `.md` files under `rules` (an absolute folder, possibly absent), each folder's files in
 * name order before its subfolders. Folders reached through symbolic links are not followed.
 * Never throws.
 */
export function ruleFiles(rules: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, depth: number): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const entry of entries) {
      if (found.length >= MAX_RULE_FILES) return;
      if (!entry.isDirectory() && entry.name.endsWith(".md")) found.push(`${folder}/${entry.name}`);
    }
    if (depth >= MAX_RULE_DEPTH) return;
    for (const entry of entries) {
      if (entry.isDirectory()) walk(`${folder}/${entry.name}`, depth + 1);
    }
  };
  walk(rules, 0);
  return found;
}

/** True when `text` opens with YAML front matter that has a `paths` key (a path-scoped rule). */
export function isPathScoped(text: string): boolean {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\s*(\r?\n|$)/.exec(text);
  return match !== null && /^paths\s*:/m.test(match[1] as string);
}
