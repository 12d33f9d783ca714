/**
 * What a tool call will do, in a line (progress steps) or a few (approval cards): the command
 * for a shell, the file for file tools (with a short diff for edits), the pattern for searches.
 */

const FILE_TOOLS = /^(write|edit|multiedit|notebookedit|write_file|edit_file|read|read_file)$/i;

function clip(text: string, length: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > length ? `${line.slice(0, length - 1)}\u2026` : line;
}

function fileOf(input: Record<string, unknown>): string | undefined {
  for (const key of ["file_path", "path", "notebook_path"]) {
    if (typeof input[key] === "string") return input[key] as string;
  }
  return undefined;
}

/** "npm test", "src/a.ts", "**\/*.ts": the argument that says what the call does. */
export function argumentSummary(
  toolName: string,
  input: Record<string, unknown>,
  length = 60,
): string {
  if (typeof input.command === "string") return clip(input.command, length);
  const file = fileOf(input);
  if (file !== undefined) return clip(file, length);
  for (const key of ["pattern", "query", "url", "description", "prompt"]) {
    if (typeof input[key] === "string") return clip(input[key] as string, length);
  }
  const first = Object.values(input).find((value) => typeof value === "string");
  return typeof first === "string" ? clip(first, length) : clip(toolName, length);
}

/** What the tool does, as a verb: run, change, read, use. */
export function toolVerb(toolName: string): string {
  const tool = toolName.toLowerCase();
  if (tool === "bash") return "run";
  if (/^(read|glob|grep|ls|read_file)$/.test(tool)) return "read";
  if (FILE_TOOLS.test(tool)) return "change";
  return "use";
}

/** A short diff of an edit (`- old` / `+ new` lines), or the start of a written file. */
export function shortDiff(input: Record<string, unknown>, maxLines = 12): string | undefined {
  const before = input.old_string ?? input.old_text;
  const after = input.new_string ?? input.new_text ?? input.content;
  if (typeof after !== "string") return undefined;
  const lines = [
    ...(typeof before === "string" ? before.split("\n").map((line) => `- ${line}`) : []),
    ...after.split("\n").map((line) => `+ ${line}`),
  ];
  const shown = lines.slice(0, maxLines).map((line) => clip(line, 100));
  if (lines.length > maxLines) shown.push(`\u2026 ${lines.length - maxLines} more lines`);
  return shown.join("\n");
}

/** The full "what": a command whole (to 600 characters), a file with its diff. */
export function requestDetail(toolName: string, input: Record<string, unknown>): string {
  if (typeof input.command === "string") {
    const command = input.command.trim();
    return command.length > 600 ? `${command.slice(0, 599)}\u2026` : command;
  }
  const file = fileOf(input);
  if (file !== undefined) {
    const diff = shortDiff(input);
    return diff === undefined ? file : `${file}\n${diff}`;
  }
  const json = JSON.stringify(input);
  return json.length > 600 ? `${json.slice(0, 599)}\u2026` : `${toolName} ${json}`;
}
