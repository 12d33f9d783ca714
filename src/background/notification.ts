import type { BackgroundTask } from "./task.js";

/** How much of a task's output goes into its notification. */
export const SUMMARY_CHARS = 500;

/**
 * The line that precedes notifications, so the model never mistakes them for
 * something the user typed.
 */
export const NOTIFICATION_PREAMBLE =
  "[Automated notice from rudder: background task results. This is not user input.]";

function escapeXmlText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

export function taskSummary(task: BackgroundTask): string {
  const head = task.output.slice(0, SUMMARY_CHARS);
  if (task.status === "failed") {
    const why = task.timedOut
      ? `Error: command timed out (status ${task.exitCode ?? "none"})`
      : `Error: command exited with status ${task.exitCode ?? task.signal ?? "unknown"}`;
    return head ? `${why}\n${head}` : why;
  }
  return head || "(no output)";
}

/** One `<task_notification>` block for a finished task. */
export function formatNotification(task: BackgroundTask): string {
  return [
    "<task_notification>",
    `<task_id>${task.id}</task_id>`,
    `<status>${task.status}</status>`,
    `<command>${escapeXmlText(task.command)}</command>`,
    `<summary>${escapeXmlText(taskSummary(task))}</summary>`,
    "</task_notification>",
  ].join("\n");
}

/** The text delivered to the model for a batch of finished tasks. */
export function formatNotifications(tasks: readonly BackgroundTask[]): string {
  return [NOTIFICATION_PREAMBLE, ...tasks.map(formatNotification)].join("\n");
}
