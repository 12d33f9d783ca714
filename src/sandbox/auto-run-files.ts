/**
 * Files that other programs on the host obey by themselves (an editor's tasks, a hook
 * manager's commands, direnv, a package manager's settings, rudder's and Claude Code's
 * settings and MCP servers): what a sandboxed command writes there would run outside the
 * sandbox later. The permission gate imports the same list for the file tools
 * (`protectedConfigPath`, which asks before writing them): the one module of this layer the
 * gate may import, so it imports nothing itself.
 */

/** Folders whose every file is obeyed by some program, at any depth of the workspace. */
export const AUTO_RUN_FOLDERS: ReadonlySet<string> = new Set([
  ".rudder",
  ".claude",
  ".vscode",
  ".idea",
  ".husky",
  ".devcontainer",
  ".lefthook",
]);

/** Single files obeyed by some program, at any depth of the workspace. */
export const AUTO_RUN_FILES: ReadonlySet<string> = new Set([
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
