import { type ActivityLine, activityLine, noticeLine } from "./activity.js";
import { clock } from "./dom.js";
import { toolLine } from "./tool-view.js";
import type { AgentEvent, TurnOutcome } from "./types.js";

/**
 * Turns the agent's events other than text into compact lines: a tool call
 * is one line that its result completes; a background task gets a line when
 * it starts and another when it ends (possibly turns later).
 */
export class AgentActivity {
  private readonly lines = new Map<string, ActivityLine>();
  private readonly tools = new Map<string, ReturnType<typeof toolLine>>();

  clear(): void {
    this.lines.clear();
    this.tools.clear();
  }

  /** Updates lines the event completes; returns a new line to show, if the event makes one. */
  lineFor(event: AgentEvent): HTMLElement | null {
    switch (event.type) {
      case "tool_start": {
        const line = toolLine(event.name, event.input);
        this.tools.set(event.toolUseId, line);
        return line.element;
      }
      case "tool_end":
        this.tools.get(event.toolUseId)?.finish(event);
        this.tools.delete(event.toolUseId);
        return null;
      case "permission_denied":
        this.tools.get(event.toolUseId)?.finish({
          type: "tool_end",
          toolUseId: event.toolUseId,
          name: event.name,
          content: event.reason,
          isError: true,
        });
        return noticeLine("denied", `${event.name}: ${event.reason}`, event.reason, true).element;
      case "task_start": {
        const line = activityLine("task", "task", event.command, event.command);
        this.lines.set(`task:${event.taskId}`, line);
        return line.element;
      }
      case "task_end": {
        const outcome = event.status === "completed" ? "ok" : "error";
        const exit =
          event.exitCode === null ? event.status : `${event.status}, exit ${event.exitCode}`;
        this.lines.get(`task:${event.taskId}`)?.finish(outcome, "", event.summary);
        const line = activityLine("task", "task finished", `(${exit}) ${event.command}`, "");
        line.finish(outcome, "", event.summary);
        return line.element;
      }
      case "inbox_delivered": {
        const parts: string[] = [];
        if (event.texts.length > 0) parts.push(`${event.texts.length} message(s)`);
        if (event.taskIds.length > 0) parts.push(`${event.taskIds.length} task notice(s)`);
        const summary = `${parts.join(" and ")} into the turn`;
        return noticeLine("delivered", summary, event.texts.join("\n\n"), false).element;
      }
      case "model_retry": {
        const seconds = Math.round(event.delayMs / 100) / 10;
        const summary = `attempt ${event.attempt} in ${seconds}s: ${event.message}`;
        return noticeLine("retry", summary, event.message, "warning").element;
      }
      case "hook_warning":
        return noticeLine("hook", `${event.event}: ${event.message}`, event.message, true).element;
      case "turn_end": {
        const { outcome } = event;
        if (!outcome.isError) return null;
        if (outcome.terminalReason.startsWith("aborted")) {
          return noticeLine("stopped", "the turn was interrupted", outcome.result, "warning")
            .element;
        }
        const summary = failureWords(outcome);
        return noticeLine("turn failed", summary, outcome.result, true).element;
      }
      default:
        return null;
    }
  }
}

/** Why a turn failed, in a few words; the engine's own text follows (the full text on expand). */
function failureWords(outcome: TurnOutcome): string {
  const said = outcome.result.trim();
  const status = outcome.apiErrorStatus;
  const kind =
    status === 529 || /overloaded/i.test(said)
      ? "the model is overloaded"
      : status === 429
        ? `rate-limited${outcome.resetAt ? ` until ${clock(outcome.resetAt)}` : ""}`
        : status === 401 || status === 403
          ? "the model refused the credentials"
          : /refus/i.test(said) || outcome.subtype === "refusal"
            ? "the model refused"
            : /crash|exited with/i.test(said)
              ? "the agent process crashed"
              : outcome.subtype === "success" || outcome.subtype === "error"
                ? "the model call failed"
                : outcome.subtype.replace(/_/g, " ");
  return said === "" ? kind : `${kind}: ${said}`;
}
