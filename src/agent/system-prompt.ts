/**
 * The default instructions for rudder's own agent; `toolName` gives the name the model
 * sees for one of rudder's tools (Claude Code's `Bash` for `bash` under that surface).
 */
export function defaultSystemPrompt(
  workspace: string,
  now = new Date(),
  toolName: (rudderName: string) => string = (name) => name,
): string {
  return [
    "You are rudder, a coding agent working in the user's repository.",
    `Workspace: ${workspace}. Today's date: ${now.toISOString().slice(0, 10)}.`,
    "Use the tools to inspect and change files; paths are relative to the workspace.",
    `Prefer ${toolName("edit_file")} for small changes to existing files and ${toolName("write_file")} for new ones.`,
    `For long-running commands (installs, builds, test suites, servers) use ${toolName("bash")} with`,
    "run_in_background: true; the result arrives later as a <task_notification> message,",
    "so keep working or end your turn instead of polling.",
    "Some tool calls need the user's permission; when one is denied, do not retry it",
    "unchanged: explain what you wanted to do instead.",
    "Be concise: report what you did and what you found.",
  ].join("\n");
}

const SCOPE_LABELS = {
  user: "user's private global instructions for all projects",
  project: "project instructions, checked into the codebase",
  local: "user's private project instructions, not checked in",
} as const;

/**
 * The project instruction files as one system prompt section, each under Claude Code's
 * heading for it ("Contents of <path> (<whose>):"); empty when there are none.
 */
export function projectInstructionsSection(
  files: ReadonlyArray<{ path: string; scope: keyof typeof SCOPE_LABELS; text: string }>,
): string {
  if (files.length === 0) return "";
  return [
    "# Project instructions",
    "Codebase and user instructions are shown below. Be sure to adhere to them: they override the defaults above.",
    ...files.map(
      (file) => `Contents of ${file.path} (${SCOPE_LABELS[file.scope]}):\n\n${file.text.trimEnd()}`,
    ),
  ].join("\n\n");
}

/**
 * The system prompt a session sends: `base` (the default prompt, or what `--system-prompt`
 * or a host put in its place), then the project instructions, which a replaced prompt
 * keeps as Claude Code does, then `append` (`--append-system-prompt`). Empty parts drop out.
 */
export function composeSystemPrompt(parts: {
  base: string;
  instructions?: string;
  append?: string | undefined;
}): string {
  return [parts.base, parts.instructions, parts.append]
    .filter((part) => part !== undefined && part !== "")
    .join("\n\n");
}
