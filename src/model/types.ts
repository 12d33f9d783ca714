/**
 * The model boundary: what the agent loop needs from a language model.
 *
 * Shapes follow the Anthropic Messages API wire format (snake_case where the
 * API uses it) because they are sent as-is and stored in transcripts.
 */

export interface TextBlock {
  type: "text";
  text: string;
}

export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** An image the model sees, as the Messages API takes it (a tool result may carry one). */
export interface ImageBlock {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
}

export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  /** Text, or text and image blocks (an MCP tool's image result). */
  content: string | Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}

export type ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock;

export interface Message {
  role: "user" | "assistant";
  content: string | ContentBlock[];
}

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface ModelRequest {
  system?: string;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens?: number;
  signal: AbortSignal;
  /** Called with each piece of assistant text as it streams in. */
  onTextDelta?: (text: string) => void;
  /** The id of the reply being streamed, as soon as it is known (before its first delta). */
  onMessageStart?: (messageId: string) => void;
  /**
   * A tool call's input as it streams in: the tool's name and the input's JSON text so far
   * (empty as its block starts), so that what the call will need can be made ready meanwhile.
   */
  onToolInput?: (name: string, json: string) => void;
  /** Called before a retry of a failed request (429, 529, 5xx). */
  onRetry?: (retry: ModelRetry) => void;
}

export interface ModelRetry {
  attempt: number;
  maxRetries: number;
  delayMs: number;
  status: number | undefined;
  message: string;
}

export interface ModelResponse {
  id: string;
  content: ContentBlock[];
  stopReason: string | null;
  usage: Usage;
}

/** Why a model call failed, as a caller branches on it. */
export type ModelErrorSubtype =
  | "rate_limit"
  | "overloaded"
  | "api_error"
  | "authentication_failed"
  | "invalid_request"
  | "network_error"
  | "aborted";

export interface ModelError {
  subtype: ModelErrorSubtype;
  message: string;
  /** HTTP status when the failure came from the API. */
  status?: number;
  /** Epoch milliseconds at which a rate limit resets, when the API said so. */
  resetAt?: number;
}

export type ModelOutcome = { ok: true; response: ModelResponse } | { ok: false; error: ModelError };

/**
 * A model the loop can call. `complete` never rejects: every failure,
 * including an abort, comes back as `{ ok: false, error }`.
 */
export interface Model {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelOutcome>;
}

export function emptyUsage(): Usage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

export function addUsage(total: Usage, more: Usage): Usage {
  return {
    input_tokens: total.input_tokens + more.input_tokens,
    output_tokens: total.output_tokens + more.output_tokens,
    cache_creation_input_tokens:
      total.cache_creation_input_tokens + more.cache_creation_input_tokens,
    cache_read_input_tokens: total.cache_read_input_tokens + more.cache_read_input_tokens,
  };
}
