/**
 * The tokens of an API `usage` object (a `result` line's, or one model call's in an
 * `assistant` line), as budgets count them: in is everything the calls read (cache reads and
 * writes included), out what they wrote.
 */

export interface UsageTokens {
  input: number;
  output: number;
}

/** The usage's numeric fields that prices apply to (0 for missing ones). */
export interface PricedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

export function pricedUsage(usage: unknown): PricedUsage {
  const fields =
    typeof usage === "object" && usage !== null ? (usage as Record<string, unknown>) : {};
  return {
    input_tokens: count(fields.input_tokens),
    output_tokens: count(fields.output_tokens),
    cache_creation_input_tokens: count(fields.cache_creation_input_tokens),
    cache_read_input_tokens: count(fields.cache_read_input_tokens),
  };
}

export function usageTokens(usage: unknown): UsageTokens {
  const priced = pricedUsage(usage);
  return {
    input:
      priced.input_tokens + priced.cache_creation_input_tokens + priced.cache_read_input_tokens,
    output: priced.output_tokens,
  };
}
