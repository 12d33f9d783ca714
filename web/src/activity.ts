import { h, preview } from "./dom.js";

/**
 * One compact, expandable line for something the agent did besides writing:
 * a tool call, a background task, a retry, a denied permission. The summary
 * is one line; the details hold the full input and output.
 */
export interface ActivityLine {
  element: HTMLDetailsElement;
  /** Marks the line finished; a non-empty summary replaces the line, output is added below. */
  finish(status: ActivityOutcome, summary: string, output: string): void;
}

export type ActivityKind = "tool" | "task" | "notice";

/** `warning`: neither done nor failed, e.g. a model call that failed and is tried again. */
export type ActivityOutcome = "ok" | "error" | "warning";

const outcomeMarks: Record<ActivityOutcome, { mark: string; label: string }> = {
  ok: { mark: "\u2713", label: "done" },
  error: { mark: "\u2717", label: "failed" },
  warning: { mark: "\u21bb", label: "retrying" },
};

export function activityLine(
  kind: ActivityKind,
  label: string,
  summary: string,
  body: string,
  key?: string,
): ActivityLine {
  const status = h(
    "span",
    { class: "activity-status", "data-testid": "activity-status", "aria-label": "running" },
    "\u2026",
  );
  const summaryText = h("span", { class: "activity-summary" }, preview(summary));
  const bodyElement = h("pre", { class: "activity-body" }, body);
  const element = h(
    "details",
    {
      class: `activity activity-${kind}`,
      "data-testid": "activity",
      "data-activity": kind,
      "data-key": key,
      "data-status": "running",
    },
    h("summary", {}, status, h("span", { class: "activity-label" }, label), " ", summaryText),
    bodyElement,
  );
  return {
    element,
    finish(outcome, finalSummary, output) {
      element.dataset.status = outcome;
      status.textContent = outcomeMarks[outcome].mark;
      status.setAttribute("aria-label", outcomeMarks[outcome].label);
      if (finalSummary) summaryText.textContent = preview(finalSummary);
      if (output) bodyElement.textContent = `${bodyElement.textContent}\n\n${output}`;
    },
  };
}

/** A finished, one-off line (a retry, a warning) with nothing to wait for. */
export function noticeLine(
  label: string,
  summary: string,
  body: string,
  outcome: ActivityOutcome | boolean,
) {
  const line = activityLine("notice", label, summary, body);
  line.finish(outcome === true ? "error" : outcome === false ? "ok" : outcome, "", "");
  return line;
}

export function formatInput(input: Record<string, unknown>): string {
  const command = input.command ?? input.file_path ?? input.path ?? input.pattern;
  return typeof command === "string" ? command : JSON.stringify(input);
}
