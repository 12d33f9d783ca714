import type { AgentEvent } from "../agent/events.js";
import {
  apiRetryLine,
  assistantLines,
  interruptedLine,
  type OutputLine,
  taskNotificationLine,
  taskStartedLine,
  toolResultLine,
} from "./output-lines.js";

/**
 * The agent events that stand for output lines by themselves (a model reply, a retry, a tool
 * result, a background task's start and end, an interruption), translated into Claude Code's
 * lines. Holds the one thing the translation needs to remember: which tool use started each
 * background task, for its notification. The events that steer the turn are the front end's.
 */
export class EventLines {
  readonly #taskToolUses = new Map<string, string>();

  /** The lines `event` prints (none for an event that is not one of these). */
  of(
    sessionId: string,
    model: string,
    event: AgentEvent,
    userMessageUuids: readonly string[],
  ): OutputLine[] {
    switch (event.type) {
      case "model_end":
        return assistantLines(sessionId, model, event, userMessageUuids);
      case "model_retry":
        return [apiRetryLine(sessionId, event)];
      case "tool_end":
        return [toolResultLine(sessionId, event)];
      case "task_start":
        this.#taskToolUses.set(event.taskId, event.toolUseId);
        return [taskStartedLine(sessionId, event)];
      case "task_end":
        return [taskNotificationLine(sessionId, event, this.#taskToolUses.get(event.taskId))];
      case "interrupted":
        return [interruptedLine(sessionId, event)];
      default:
        return [];
    }
  }
}
