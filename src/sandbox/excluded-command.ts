/**
 * Whether `command` is one of `sandbox.excludedCommands`, which run outside
 * the sandbox. An entry is a command prefix in Claude Code's spellings
 * (`docker`, `docker compose`, `docker:*`, `docker *`): it matches the command
 * itself or the command followed by arguments, after leading whitespace.
 * Such a command runs unconfined, so the gate judges it as it judges every
 * command without the sandbox (each part of a compound one).
 */
export function isExcludedCommand(command: string, excluded: readonly string[]): boolean {
  const text = command.trim();
  return excluded.some((entry) => {
    const prefix = entry
      .trim()
      .replace(/(:\*|\s+\*)$/, "")
      .trim();
    if (prefix === "") return false;
    return text === prefix || text.startsWith(`${prefix} `) || text.startsWith(`${prefix}\t`);
  });
}
