import type { AgentEvent } from "../agent/events.js";
import type { PermissionDenial } from "./output-lines.js";

/**
 * The tool calls the permission gate (or a hook) refused, with their inputs, as a result's
 * `permission_denials` lists them. Fed every event of a session; `take()` hands over those
 * recorded since the last call.
 */
export class PermissionDenials {
  readonly #inputs = new Map<string, Record<string, unknown>>();
  #denials: PermissionDenial[] = [];

  record(event: AgentEvent): void {
    switch (event.type) {
      case "tool_start":
        this.#inputs.set(event.toolUseId, event.input);
        return;
      case "permission_denied":
        this.#denials.push({
          tool_name: event.name,
          tool_use_id: event.toolUseId,
          tool_input: this.#inputs.get(event.toolUseId) ?? {},
        });
        return;
      case "tool_end":
        this.#inputs.delete(event.toolUseId);
        return;
      default:
        return;
    }
  }

  take(): PermissionDenial[] {
    const taken = this.#denials;
    this.#denials = [];
    return taken;
  }
}
