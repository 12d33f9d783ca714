import type { AgentTurnOptions, AgentTurnResult } from "../agents/agent-process.js";
import { outcomeFromResultLine, StreamJsonEventMapper } from "../agents/stream-json-events.js";
import type { GatewayEvent } from "../events.js";

/** Unreadable lines of one turn logged at most. */
const MAX_LOGGED_UNREADABLE = 5;

/**
 * Publishes one turn's progress on a channel: the child's stream-json lines
 * mapped to agent events when the process hands them over (`onEvent`), else
 * its text blocks (`onText`) and a `turn_end` made from the result. Also
 * reports the session id as soon as the child announces it, so a gateway
 * killed mid-turn can still resume the conversation. A line the child printed
 * that could not be read (not JSON, nested too deep, over the length cap) is
 * logged as one line naming the channel, the first few of a turn, so that a
 * flood of them is no flood of the log.
 */
export class TurnEvents {
  readonly #channelId: string;
  readonly #publish: (event: GatewayEvent) => void;
  readonly #onSession: (sessionId: string) => void;
  readonly #observe: ((line: unknown) => void) | undefined;
  readonly #mapper = new StreamJsonEventMapper();
  readonly #log: ((line: string) => void) | undefined;
  #sawLines = false;
  #unreadable = 0;

  constructor(
    channelId: string,
    publish: (event: GatewayEvent) => void,
    onSession: (sessionId: string) => void,
    /** Sees every raw line first (context usage, compaction boundaries). */
    observe?: (line: unknown) => void,
    log?: (line: string) => void,
  ) {
    this.#log = log;
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
        if (record.type === "output_error") this.#unreadableLine(record);
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

  #unreadableLine(record: Record<string, unknown>): void {
    this.#unreadable += 1;
    if (this.#unreadable > MAX_LOGGED_UNREADABLE) return;
    const excerpt = JSON.stringify(String(record.excerpt ?? "").slice(0, 80));
    // The parser's message quotes the line too: its control characters are not the log's.
    const reason = withoutControlCharacters(String(record.message));
    const more =
      this.#unreadable === MAX_LOGGED_UNREADABLE
        ? "; further ones of this turn are not logged"
        : "";
    this.#log?.(
      `gateway: the agent of channel ${this.#channelId} printed a line that could not be read ` +
        `(${reason}), skipped: ${excerpt}${more}`,
    );
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

/** `text` with each control character (C0, DEL, C1) as `?`. */
function withoutControlCharacters(text: string): string {
  let clean = "";
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    clean += code < 0x20 || (code >= 0x7f && code <= 0x9f) ? "?" : character;
  }
  return clean;
}
