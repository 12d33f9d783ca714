/**
 * A new repository's config, made inside the sandbox (`git init`, `git config`), kept to the
 * keys that run nothing: repository format, line endings, identity, branches and remotes. Any
 * other key (core.fsmonitor, core.hooksPath, core.pager, aliases, filters, include.path, ...)
 * could make the host's git run a command later, so the file is rewritten without it. The
 * host's git reads the file (`--list`, includes not followed), so what is judged is what git
 * itself would see.
 */
import { childProcess } from "./child-process.js";

const SAFE_KEYS = [
  /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|safecrlf)$/,
  /^extensions\.objectformat$/,
  /^init\.defaultbranch$/,
  /^user\.(name|email)$/,
  /^branch\..+\.(remote|merge|rebase)$/,
  /^remote\..+\.(url|pushurl|fetch)$/,
];

function isSafe(key: string, value: string): boolean {
  if (!SAFE_KEYS.some((pattern) => pattern.test(key))) return false;
  // `ext::` runs a command as a transport; `remote.*.url` may name one.
  return !/^\s*ext::/i.test(value);
}

export type ConfigJudgement =
  | { kind: "safe" }
  | { kind: "rewrite"; content: string; dropped: string[] }
  | { kind: "unreadable"; reason: string };

function quoted(value: string): string {
  const escaped = value
    .replace(/\\/g, "\\\\")
    .replace(/"/g, '\\"')
    .replace(/\n/g, "\\n")
    .replace(/\t/g, "\\t");
  return `"${escaped}"`;
}

/** The config file at `path` judged by the host's git: safe as it is, or its safe keys only. */
export function judgeNewConfig(path: string): ConfigJudgement {
  const listed = childProcess().spawnSync(
    "git",
    ["config", "--file", path, "--no-includes", "--list", "--null"],
    {
      encoding: "utf8",
      timeout: 10_000,
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", HOME: "/nonexistent" },
    },
  );
  if (listed.error !== undefined || listed.status !== 0) {
    return {
      kind: "unreadable",
      reason: listed.error?.message ?? (listed.stderr.trim() || "git config failed"),
    };
  }
  const kept: Array<[string, string]> = [];
  const dropped: string[] = [];
  for (const item of listed.stdout.split("\0")) {
    if (item === "") continue;
    const newline = item.indexOf("\n");
    const key = newline === -1 ? item : item.slice(0, newline);
    const value = newline === -1 ? "true" : item.slice(newline + 1);
    if (isSafe(key.toLowerCase(), value)) kept.push([key, value]);
    else dropped.push(key);
  }
  if (dropped.length === 0) return { kind: "safe" };
  const sections = new Map<string, string[]>();
  for (const [key, value] of kept) {
    const first = key.indexOf(".");
    const last = key.lastIndexOf(".");
    const section = key.slice(0, first);
    const subsection = first === last ? undefined : key.slice(first + 1, last);
    if (subsection?.includes("\n")) continue;
    const header =
      subsection === undefined
        ? `[${section}]`
        : `[${section} "${subsection.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"]`;
    const lines = sections.get(header) ?? [];
    lines.push(`\t${key.slice(last + 1)} = ${quoted(value)}`);
    sections.set(header, lines);
  }
  const content = [...sections].map(([header, lines]) => `${header}\n${lines.join("\n")}\n`);
  return { kind: "rewrite", content: content.join(""), dropped };
}
