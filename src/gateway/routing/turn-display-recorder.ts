import type { AgentEvent } from "../../agent/events.js";
import type { GatewayEvent, TurnDisplay } from "../events.js";

/** Kinds of event the page draws inside a turn. */
const SHOWN = new Set<string>([
  "text_delta",
  "tool_start",
  "tool_end",
  "permission_denied",
  "model_retry",
  "task_start",
  "task_end",
  "inbox_delivered",
  "hook_warning",
  "turn_end",
]);

/** A tool result's text kept in the history at most (the live page had all of it). */
const MAX_OUTPUT = 64 * 1024;
/** Events kept of one turn at most; past it the rest of the turn is not kept. */
const MAX_EVENTS = 2000;

/**
 * Gathers each channel's turn events as they are published, until the reply or error that
 * ends the turn takes them (`take`) to be stored with it.
 */
export class TurnDisplayRecorder {
  readonly #turns = new Map<string, AgentEvent[]>();

  record(event: GatewayEvent): void {
    if (!SHOWN.has(event.type)) return;
    const { channelId, ...rest } = event;
    const agentEvent = rest as AgentEvent;
    const events = this.#turns.get(channelId) ?? [];
    this.#turns.set(channelId, events);
    const last = events.at(-1);
    if (agentEvent.type === "text_delta" && last?.type === "text_delta") {
      events[events.length - 1] = { type: "text_delta", text: last.text + agentEvent.text };
      return;
    }
    if (events.length >= MAX_EVENTS) return;
    events.push(agentEvent.type === "tool_end" ? trimmed(agentEvent) : agentEvent);
  }

  /** The channel's events since the last take (null when none), and forgets them. */
  take(channelId: string): TurnDisplay | null {
    const events = this.#turns.get(channelId);
    this.#turns.delete(channelId);
    return events && events.length > 0 ? { events } : null;
  }
}

function trimmed(event: Extract<AgentEvent, { type: "tool_end" }>): AgentEvent {
  if (event.content.length <= MAX_OUTPUT) return event;
  const cut = event.content.length - MAX_OUTPUT;
  return {
    ...event,
    content: `${event.content.slice(0, MAX_OUTPUT)}\n[${cut} more characters not kept in the history]`,
  };
}
