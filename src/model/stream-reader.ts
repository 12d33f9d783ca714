import { ApiConnectionError } from "./api-error.js";
import type { ContentBlock, ModelResponse } from "./types.js";
import { emptyUsage } from "./types.js";

/** The subset of raw stream events this reader understands; others are skipped. */
interface StreamEvent {
  type: string;
  index?: number;
  message?: { id?: string; usage?: Partial<Record<string, unknown>> };
  content_block?: { type?: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: Partial<Record<string, unknown>>;
}

type PartialBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; json: string };

function tokens(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** What the reader tells as the reply streams in. */
export interface StreamCallbacks {
  onTextDelta?: (text: string) => void;
  onMessageStart?: (messageId: string) => void;
  /** A tool_use block's input so far: its tool's name and JSON text ("" as the block starts). */
  onToolInput?: (name: string, json: string) => void;
}

/**
 * Assembles a streamed reply into a `ModelResponse`, passing text deltas to
 * `onTextDelta` as they arrive. Blocks other than text and tool_use (thinking,
 * server tools) and empty text blocks (which the API refuses when sent back) are dropped. A stream that ends before `message_stop` throws a
 * connection error, so that the caller retries it.
 */
export async function readMessageStream(
  stream: AsyncIterable<unknown>,
  callbacks: StreamCallbacks = {},
): Promise<ModelResponse> {
  const { onTextDelta, onMessageStart, onToolInput } = callbacks;
  const blocks = new Map<number, PartialBlock>();
  const usage = emptyUsage();
  let id = "";
  let stopReason: string | null = null;
  let finished = false;

  const applyUsage = (source: Partial<Record<string, unknown>> | undefined): void => {
    if (source === undefined) return;
    usage.input_tokens = tokens(source.input_tokens) ?? usage.input_tokens;
    usage.output_tokens = tokens(source.output_tokens) ?? usage.output_tokens;
    usage.cache_creation_input_tokens =
      tokens(source.cache_creation_input_tokens) ?? usage.cache_creation_input_tokens;
    usage.cache_read_input_tokens =
      tokens(source.cache_read_input_tokens) ?? usage.cache_read_input_tokens;
  };

  for await (const raw of stream) {
    const event = raw as StreamEvent;
    const index = event.index ?? 0;
    if (event.type === "message_start") {
      id = event.message?.id ?? id;
      onMessageStart?.(id);
      applyUsage(event.message?.usage);
    } else if (event.type === "content_block_start") {
      const start = event.content_block;
      if (start?.type === "text") {
        blocks.set(index, { type: "text", text: start.text ?? "" });
        if (start.text) onTextDelta?.(start.text);
      } else if (start?.type === "tool_use") {
        blocks.set(index, {
          type: "tool_use",
          id: start.id ?? "",
          name: start.name ?? "",
          json: "",
        });
        if (start.name) onToolInput?.(start.name, "");
      }
    } else if (event.type === "content_block_delta") {
      const block = blocks.get(index);
      if (block?.type === "text" && event.delta?.type === "text_delta") {
        const text = event.delta.text ?? "";
        block.text += text;
        if (text !== "") onTextDelta?.(text);
      } else if (block?.type === "tool_use" && event.delta?.type === "input_json_delta") {
        const piece = event.delta.partial_json ?? "";
        block.json += piece;
        if (piece !== "" && block.name !== "") onToolInput?.(block.name, block.json);
      }
    } else if (event.type === "message_delta") {
      stopReason = event.delta?.stop_reason ?? stopReason;
      applyUsage(event.usage);
    } else if (event.type === "message_stop") {
      finished = true;
    }
  }
  if (!finished) {
    throw new ApiConnectionError("stream ended before message_stop");
  }

  const content: ContentBlock[] = [...blocks.entries()]
    .sort(([left], [right]) => left - right)
    .filter(([, block]) => block.type !== "text" || block.text !== "")
    .map(([, block]) =>
      block.type === "text"
        ? { type: "text", text: block.text }
        : { type: "tool_use", id: block.id, name: block.name, input: parseToolInput(block.json) },
    );
  return { id, content, stopReason, usage };
}

function parseToolInput(json: string): Record<string, unknown> {
  if (json.trim() === "") return {};
  const value: unknown = JSON.parse(json);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`tool input is not a JSON object: ${json.slice(0, 200)}`);
  }
  return value as Record<string, unknown>;
}
