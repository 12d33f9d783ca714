import type { AgentTurnOptions, AgentTurnResult } from "../agents/agent-process.js";
import { outcomeFromResultLine, StreamJsonEventMapper } from "../agents/stream-json-events.js";
import type { GatewayEvent } from "../events.js";

/**
 * Publishes one turn's progress on a channel: the child's stream-json lines
 * mapped to agent events when the process hands them over (`onEvent`), else
 * its text blocks (`onText`) and a `turn_end` made from the result. Also
 * reports the session id as soon as the child announces it, so a gateway
 * killed mid-turn can still resume the conversation.
 */
export class TurnEvents {
  readonly #channelId: string;
  readonly #publish: (event: GatewayEvent) => void;
  readonly #onSession: (sessionId: string) => void;
  readonly #observe: ((line: unknown) => void) | undefined;
  readonly #mapper = new StreamJsonEventMapper();
  #sawLines = false;

  constructor(
    channelId: string,
    publish: (event: GatewayEvent) => void,
    onSession: (sessionId: string) => void,
    /** Sees every raw line first (context usage, compaction boundaries). */
    observe?: (line: unknown) => void,
  ) {
    this.#channelId = channelId;
    this.#publish = publish;
    this.#onSession = onSession;
    this.#observe = observe;
  }

  options(timeoutMs: number | undefined): AgentTurnOptions {
    return {
      ...(timeoutMs ? { timeoutMs } : {}),
      onEvent: (line) => {
        this.#sawLines = true;
        this.#observe?.(line);
        const record = line as Record<string, unknown>;
        if (record.type === "system" && record.subtype === "init") {
          if (typeof record.session_id === "string") this.#onSession(record.session_id);
        }
        for (const event of this.#mapper.map(line)) {
          this.#publish({ ...event, channelId: this.#channelId });
        }
      },
      onText: (text) => {
        if (!this.#sawLines)
          this.#publish({ type: "text_delta", text, channelId: this.#channelId });
      },
    };
  }

  /** The `turn_end` of a process that gave no raw lines (with lines, `result` lines made it). */
  ended(result: AgentTurnResult): void {
    if (this.#sawLines) return;
    this.#publish({
      type: "turn_end",
      outcome: outcomeFromResultLine({
        result: result.result,
        is_error: result.isError,
        subtype: result.subtype,
        num_turns: result.numTurns,
        duration_ms: result.durationMs,
        usage: result.usage,
        total_cost_usd: result.totalCostUsd,
      }),
      channelId: this.#channelId,
    });
  }
}
