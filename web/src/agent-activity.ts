import { type ActivityLine, activityLine, formatInput, noticeLine } from "./activity.js";
import type { AgentEvent } from "./types.js";

/**
 * Turns the agent's events other than text into compact lines: a tool call
 * is one line that its result completes; a background task gets a line when
 * it starts and another when it ends (possibly turns later).
 */
export class AgentActivity {
  private readonly lines = new Map<string, ActivityLine>();

  clear(): void {
    this.lines.clear();
  }

  /** Updates lines the event completes; returns a new line to show, if the event makes one. */
  lineFor(event: AgentEvent): HTMLElement | null {
    switch (event.type) {
      case "tool_start": {
        const input = JSON.stringify(event.input, null, 2);
        const line = activityLine("tool", event.name, formatInput(event.input), input);
        this.lines.set(`tool:${event.toolUseId}`, line);
        return line.element;
      }
      case "tool_end":
        this.lines
          .get(`tool:${event.toolUseId}`)
          ?.finish(event.isError ? "error" : "ok", "", event.content);
        return null;
      case "permission_denied":
        this.lines.get(`tool:${event.toolUseId}`)?.finish("error", "", event.reason);
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
        return noticeLine("retry", summary, event.message, false).element;
      }
      case "hook_warning":
        return noticeLine("hook", `${event.event}: ${event.message}`, event.message, true).element;
      case "turn_end": {
        const { outcome } = event;
        if (!outcome.isError) return null;
        const reason = outcome.subtype === "success" ? outcome.terminalReason : outcome.subtype;
        const summary = `${reason}: ${outcome.result}`;
        return noticeLine("turn failed", summary, outcome.result, true).element;
      }
      default:
        return null;
    }
  }
}
