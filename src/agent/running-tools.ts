import { onGroupsKilled } from "../tools/process-groups.js";
import type { AgentEvent } from "./events.js";

/** Tools whose process trees rudder killed on its way out, before their results were recorded. */
export interface ToolKill {
  toolUseIds: string[];
  /** When the kill began (ISO time). */
  at: string;
  /** `SIGTERM` / `SIGINT` (rudder was stopped), or `exit` (it ended with tools running). */
  cause: string;
}

/**
 * The tools a session is running now (from its `tool_start` / `tool_end` events), so that when
 * rudder's exit kills their process trees (`onGroupsKilled`) the kill can be recorded with its
 * time: a resumed conversation then tells the model what happened to them, not "unknown".
 */
export class RunningTools {
  readonly #running = new Set<string>();
  readonly #unsubscribe: () => void;

  constructor(onKilled: (kill: ToolKill) => void) {
    this.#unsubscribe = onGroupsKilled((cause) => {
      if (this.#running.size === 0) return;
      onKilled({ toolUseIds: [...this.#running], at: new Date().toISOString(), cause });
    });
  }

  observe(event: AgentEvent): void {
    if (event.type === "tool_start") this.#running.add(event.toolUseId);
    else if (event.type === "tool_end") this.#running.delete(event.toolUseId);
    else if (event.type === "turn_end") this.#running.clear();
  }

  close(): void {
    this.#unsubscribe();
    this.#running.clear();
  }
}
