/**
 * Claude Code's tool names and the rudder tools they mean. A user's existing
 * matchers (`Bash`, `Edit|Write`) and hook scripts (which read
 * `tool_input.file_path`) keep working because both names are matched and
 * both field spellings are sent.
 */
const CLAUDE_NAMES: Readonly<Record<string, readonly string[]>> = {
  bash: ["Bash"],
  read_file: ["Read"],
  write_file: ["Write"],
  edit_file: ["Edit", "MultiEdit"],
  glob: ["Glob"],
};

/** Claude Code's name for a rudder tool (`bash` -> `Bash`); unknown names pass through. */
export function claudeToolName(rudderName: string): string {
  return CLAUDE_NAMES[rudderName]?.[0] ?? rudderName;
}

/**
 * Every name a matcher may use for this tool: rudder's and Claude Code's, whichever of
 * the two the call was made under (`read_file` and `Read` both give `read_file`, `Read`).
 */
export function toolNameAliases(toolName: string): string[] {
  const claudeNames = CLAUDE_NAMES[toolName];
  if (claudeNames !== undefined) return [toolName, ...claudeNames];
  const rudderName = Object.keys(CLAUDE_NAMES).find((name) => CLAUDE_NAMES[name]?.[0] === toolName);
  return rudderName === undefined ? [toolName] : [toolName, rudderName];
}

/** rudder input field -> Claude Code input field, per tool. */
const FIELD_ALIASES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  read_file: [["path", "file_path"]],
  write_file: [["path", "file_path"]],
  edit_file: [
    ["path", "file_path"],
    ["old_text", "old_string"],
    ["new_text", "new_string"],
  ],
};

/**
 * The tool input as a Claude Code hook expects it: rudder's fields plus
 * Claude Code's spellings of them (`file_path` is absolute, as Claude Code
 * sends it). Fields the input already has are never overwritten.
 */
export function claudeToolInput(
  rudderName: string,
  input: Record<string, unknown>,
  resolvePath: (path: string) => string,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...input };
  for (const [rudderField, claudeField] of FIELD_ALIASES[rudderName] ?? []) {
    const value = input[rudderField];
    if (value === undefined || claudeField in result) continue;
    result[claudeField] =
      claudeField === "file_path" && typeof value === "string" ? resolvePath(value) : value;
  }
  return result;
}

/**
 * Maps a hook's `updatedInput` back to rudder's fields. A Claude Code field
 * wins over rudder's when the hook changed it from what was sent, or when
 * rudder's field is absent; the Claude Code spellings are then dropped.
 */
export function rudderToolInput(
  rudderName: string,
  updated: Record<string, unknown>,
  sent: Record<string, unknown>,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...updated };
  for (const [rudderField, claudeField] of FIELD_ALIASES[rudderName] ?? []) {
    if (!(claudeField in result)) continue;
    const value = result[claudeField];
    if (!(rudderField in result) || value !== sent[claudeField]) result[rudderField] = value;
    delete result[claudeField];
  }
  return result;
}
