import type { BackgroundTask } from "../../background/task.js";
import { formatElapsed } from "./spinner.js";

/** Longest summary of a tool's input or result shown on one line. */
const MAX_SUMMARY_CHARS = 100;

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` without control characters other than newline and tab, so model
 * text and command output cannot move the cursor or restyle the terminal.
 */
export function printable(text: string): string {
  return text.replaceAll(CONTROL_CHARACTERS, "");
}

/** First line of `text`, cut to `max` characters with `...` when longer. */
export function oneLine(text: string, max = MAX_SUMMARY_CHARS): string {
  const lines = printable(text).trim().split("\n");
  const first = (lines[0] ?? "").trimEnd();
  const more = lines.length > 1;
  if (first.length > max) return `${first.slice(0, max - 3)}...`;
  return more ? `${first} ...` : first;
}

/** The input field that says most about a call, per tool. */
const MAIN_FIELD: Record<string, string> = {
  bash: "command",
  read_file: "path",
  write_file: "path",
  edit_file: "path",
  glob: "pattern",
  Bash: "command",
  Read: "file_path",
  Write: "file_path",
  Edit: "file_path",
  Glob: "pattern",
};

/** `  > bash  npm test`: the tool and what it was given, on one line. */
export function describeToolCall(name: string, input: Record<string, unknown>): string {
  const field = MAIN_FIELD[name];
  let value = field === undefined ? undefined : input[field];
  if (typeof value !== "string") {
    value = Object.values(input).find((candidate) => typeof candidate === "string");
  }
  const summary = typeof value === "string" ? oneLine(value) : "";
  const background = input.run_in_background === true ? " (background)" : "";
  return `  > ${name}${summary === "" ? "" : `  ${summary}`}${background}`;
}

function lineCount(text: string): number {
  const trimmed = text.replace(/\n+$/, "");
  return trimmed === "" ? 0 : trimmed.split("\n").length;
}

/** `  ok (12 lines)` or `  error: <first line>`. */
export function describeToolResult(content: string, isError: boolean): string {
  if (isError) return `  error: ${oneLine(content)}`;
  const count = lineCount(content);
  return `  ok (${count} ${count === 1 ? "line" : "lines"})`;
}

/** `[bg_0001 completed] npm test`, printed the moment a task ends. */
export function describeTaskEnd(taskId: string, status: string, command: string): string {
  return `[${taskId} ${status}] ${oneLine(command)}`;
}

/** One row of `/tasks`: id, status (with exit code), run time, command. */
export function describeTask(task: BackgroundTask, now = Date.now()): string {
  const status =
    task.status === "running"
      ? "running"
      : task.timedOut
        ? "failed (timed out)"
        : task.status === "failed"
          ? `failed (${task.exitCode === null ? (task.signal ?? "killed") : `exit ${task.exitCode}`})`
          : "completed";
  const elapsed = formatElapsed((task.endedAt ?? now) - task.startedAt);
  return `  ${task.id}  ${status.padEnd(18)} ${elapsed.padStart(6)}  ${oneLine(task.command, 60)}`;
}

/** The `/tasks` listing. */
export function describeTasks(tasks: Iterable<BackgroundTask>, now = Date.now()): string {
  const rows = [...tasks].map((task) => describeTask(task, now));
  return rows.length === 0 ? "  no background tasks" : rows.join("\n");
}

export const CHAT_HELP = `commands:
  /tasks   list background tasks and their status
  /compact [focus]  summarize the conversation to free the context window
  /clear   start a new conversation (this one stays stored)
  /help    show this help
  /quit    leave (Ctrl-D too)
keys:
  Enter    send; while the agent works, the text joins the running turn
  Ctrl-C   abort the running turn; at an empty prompt, twice in a row leaves`;

/** Tokens for people: `182k`, `3.4k`, `950`. */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  return tokens < 10_000 ? `${(tokens / 1000).toFixed(1)}k` : `${Math.round(tokens / 1000)}k`;
}
