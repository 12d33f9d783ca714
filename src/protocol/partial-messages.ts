import type { AgentEvent } from "../agent/events.js";
import { type OutputLine, streamEventLine } from "./output-lines.js";

/**
 * `--include-partial-messages`: rebuilds the API's stream events for the text of each model
 * call from the loop's text deltas (`message_start`, `content_block_start`,
 * `content_block_delta`, then `content_block_stop`, `message_delta`, `message_stop` when the
 * call ends). The loop does not say where one text block ends and the next begins, so all
 * text of a call is streamed as block 0; the `assistant` lines carry the exact blocks.
 */
export class PartialMessages {
  readonly #sessionId: string;
  readonly #model: string;
  readonly #write: (line: OutputLine) => void;
  #open = false;

  constructor(sessionId: string, model: string, write: (line: OutputLine) => void) {
    this.#sessionId = sessionId;
    this.#model = model;
    this.#write = write;
  }

  #emit(event: Record<string, unknown>, messageId?: string): void {
    this.#write(streamEventLine(this.#sessionId, event, messageId));
  }

  onEvent(event: AgentEvent): void {
    switch (event.type) {
      case "model_start":
        this.#open = false;
        return;
      case "text_delta":
        if (!this.#open) {
          this.#open = true;
          this.#emit({
            type: "message_start",
            message: {
              type: "message",
              role: "assistant",
              model: this.#model,
              content: [],
              stop_reason: null,
              stop_sequence: null,
            },
          });
          this.#emit({
            type: "content_block_start",
            index: 0,
            content_block: { type: "text", text: "" },
          });
        }
        this.#emit({
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: event.text },
        });
        return;
      case "model_end": {
        if (!this.#open) return;
        this.#open = false;
        const hasTools =
          typeof event.message.content !== "string" &&
          event.message.content.some((block) => block.type === "tool_use");
        this.#emit({ type: "content_block_stop", index: 0 }, event.messageId);
        this.#emit(
          {
            type: "message_delta",
            delta: { stop_reason: hasTools ? "tool_use" : "end_turn", stop_sequence: null },
            usage: { output_tokens: event.usage.output_tokens },
          },
          event.messageId,
        );
        this.#emit({ type: "message_stop" }, event.messageId);
        return;
      }
      case "turn_end":
        this.#open = false;
        return;
      default:
        return;
    }
  }
}
