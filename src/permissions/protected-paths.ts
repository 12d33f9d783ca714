import { posix } from "node:path";

/**
 * Files that configure what runs unconfined later (hooks, MCP servers, git's
 * hooks and config, editors' tasks), as Claude Code's protected paths: the
 * workspace's `.rudder/`, `.claude/`, `.mcp.json`, `.vscode/`, `.idea/`,
 * `.husky/`, and any `.git` at any depth (a nested repository's config runs
 * programs too). Writing them with the file tools is asked about, so that an
 * injected prompt cannot plant a hook.
 */
const TOP_LEVEL = new Set([".rudder", ".claude", ".mcp.json", ".vscode", ".idea", ".husky"]);

/** The protected name a workspace-relative path lies under, or undefined. */
export function protectedConfigPath(relative: string): string | undefined {
  const segments = posix.normalize(relative).toLowerCase().split("/");
  if (TOP_LEVEL.has(segments[0]!)) return segments[0];
  return segments.includes(".git") ? ".git" : undefined;
}
