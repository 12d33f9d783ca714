/** How full a channel's conversation is: tokens it takes, of the model's window. */
export interface ContextUsage {
  tokens: number;
  /** The model's context window; null when the agent did not say. */
  window: number | null;
}

/** What a `compact_boundary` line says (Claude Code's `compact_metadata`). */
export interface CompactBoundary {
  trigger: "manual" | "auto";
  preTokens: number | null;
  postTokens: number | null;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

function optionalCount(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** A request's size: input, cache read and cache creation tokens, plus what it wrote. */
function requestTokens(usage: unknown): number {
  if (!isObject(usage)) return 0;
  return (
    count(usage.input_tokens) +
    count(usage.cache_read_input_tokens) +
    count(usage.cache_creation_input_tokens) +
    count(usage.output_tokens)
  );
}

/** The `compact_metadata` of a `system/compact_boundary` line, or null for any other line. */
export function compactBoundaryOf(line: unknown): CompactBoundary | null {
  if (!isObject(line) || line.type !== "system" || line.subtype !== "compact_boundary") {
    return null;
  }
  const metadata = isObject(line.compact_metadata) ? line.compact_metadata : {};
  return {
    trigger: metadata.trigger === "auto" ? "auto" : "manual",
    preTokens: optionalCount(metadata.pre_tokens),
    postTokens: optionalCount(metadata.post_tokens),
  };
}

/**
 * Follows one agent process's stream-json lines and says how full its conversation is
 * after each `result`: the last model request's usage (an `assistant` line's, which is per
 * request, where a result's sums the turn), or a compaction's `post_tokens`, of the
 * largest `modelUsage[model].contextWindow` the result names (Claude Code's shape).
 */
export class ContextUsageTracker {
  #tokens: number | null = null;

  /** The usage a `result` line settles, or null for other lines and results saying nothing. */
  accept(line: unknown): ContextUsage | null {
    if (!isObject(line)) return null;
    if (line.type === "assistant" && isObject(line.message)) {
      const tokens = requestTokens(line.message.usage);
      if (tokens > 0) this.#tokens = tokens;
      return null;
    }
    const boundary = compactBoundaryOf(line);
    if (boundary !== null) {
      this.#tokens = boundary.postTokens;
      return null;
    }
    if (line.type !== "result") return null;
    let window: number | null = null;
    if (isObject(line.modelUsage)) {
      for (const usage of Object.values(line.modelUsage)) {
        if (!isObject(usage)) continue;
        const size = optionalCount(usage.contextWindow);
        if (size !== null && size > (window ?? 0)) window = size;
      }
    }
    const tokens = this.#tokens ?? (line.num_turns === 0 ? null : requestTokens(line.usage));
    this.#tokens = null;
    // A failed turn reports no usage (zero tokens): the conversation did not shrink, so the
    // last known value stands.
    if (tokens === null || tokens === 0) return null;
    return { tokens, window };
  }
}
