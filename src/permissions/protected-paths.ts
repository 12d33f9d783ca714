import { posix } from "node:path";
import { AUTO_RUN_FILES, AUTO_RUN_FOLDERS } from "../sandbox/auto-run-files.js";

/**
 * Files that configure what runs unconfined later, as Claude Code's protected paths and
 * beyond: anything under a folder named `.git` (a nested repository's config runs programs
 * too) or one of the sandbox's auto-run folders (`.rudder/`, `.claude/`, `.vscode/`, ...), and
 * its auto-run files (`.mcp.json`, `.envrc`, `.npmrc`, `lefthook.yml`, ...), at any depth of the
 * workspace. Writing them with the file tools is asked about, so that an injected prompt cannot
 * plant a hook. One list serves both layers: the sandbox keeps the same names read-only.
 */
const FOLDERS: ReadonlySet<string> = new Set([".git", ...AUTO_RUN_FOLDERS]);

/** The protected name a workspace-relative path lies under, or undefined. */
export function protectedConfigPath(relative: string): string | undefined {
  const segments = posix.normalize(relative).toLowerCase().split("/");
  const folder = segments.slice(0, -1).find((segment) => FOLDERS.has(segment));
  if (folder !== undefined) return folder;
  const last = segments[segments.length - 1] ?? "";
  return FOLDERS.has(last) || AUTO_RUN_FILES.has(last) ? last : undefined;
}
