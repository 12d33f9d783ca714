import type { Message, ModelRequest } from "./types.js";

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * The Messages API body for `request`, with prompt-cache breakpoints on the
 * system prompt, the last tool and the last block of the last message, so that
 * each call of a growing conversation reads the previous prefix from the cache.
 * The request's own messages are not modified.
 */
export function buildRequestBody(
  request: ModelRequest,
  model: string,
  defaultMaxTokens: number,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    max_tokens: request.maxTokens ?? defaultMaxTokens,
    messages: withLastMessageBreakpoint(request.messages),
  };
  if (request.system !== undefined && request.system !== "") {
    body.system = [{ type: "text", text: request.system, cache_control: EPHEMERAL }];
  }
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool, index) =>
      index === request.tools.length - 1 ? { ...tool, cache_control: EPHEMERAL } : tool,
    );
  }
  return body;
}

function withLastMessageBreakpoint(messages: readonly Message[]): unknown[] {
  const last = messages.at(-1);
  if (last === undefined || typeof last.content === "string" || last.content.length === 0) {
    return [...messages];
  }
  const blocks = last.content.map((block, index) =>
    index === last.content.length - 1 ? { ...block, cache_control: EPHEMERAL } : block,
  );
  return [...messages.slice(0, -1), { role: last.role, content: blocks }];
}
