import { posix } from "node:path";

/**
 * Files that configure what runs unconfined later, as Claude Code's protected paths and
 * beyond: anything under a folder named `.git` (a nested repository's config runs programs
 * too), `.rudder/`, `.claude/`, `.vscode/`, `.idea/`, `.husky/`, `.devcontainer/` or
 * `.lefthook/`, and files other programs obey by themselves (`.mcp.json`, direnv's `.envrc`,
 * package managers' `.npmrc`, `.yarnrc(.yml)`, `.pnpmfile.cjs`, `bunfig.toml`, hook managers'
 * `.pre-commit-config.yaml` and `lefthook.yml`), at any depth of the workspace. Writing them
 * with the file tools is asked about, so that an injected prompt cannot plant a hook. The
 * sandbox keeps the same names read-only (src/sandbox/auto-run-files.ts; the layers keep a
 * list each, as neither may import the other).
 */
const FOLDERS = new Set([
  ".git",
  ".rudder",
  ".claude",
  ".vscode",
  ".idea",
  ".husky",
  ".devcontainer",
  ".lefthook",
]);

const FILES = new Set([
  ".mcp.json",
  ".envrc",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pnpmfile.cjs",
  "bunfig.toml",
  ".pre-commit-config.yaml",
  "lefthook.yml",
  "lefthook.yaml",
  ".lefthook.yml",
  ".lefthook.yaml",
  "lefthook-local.yml",
  ".lefthook-local.yml",
]);

/** The protected name a workspace-relative path lies under, or undefined. */
export function protectedConfigPath(relative: string): string | undefined {
  const segments = posix.normalize(relative).toLowerCase().split("/");
  const folder = segments.slice(0, -1).find((segment) => FOLDERS.has(segment));
  if (folder !== undefined) return folder;
  const last = segments[segments.length - 1] ?? "";
  return FOLDERS.has(last) || FILES.has(last) ? last : undefined;
}
