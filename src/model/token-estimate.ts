/**
 * A cheap, deliberately generous count of the tokens a piece of a request takes: one per
 * 3.5 characters of its JSON. The Messages API's tokenizer gives about four characters
 * per token of English and fewer of code; erring high makes compaction come early, never
 * late. Only what was added since the last reported usage is estimated.
 */
export function estimateTokens(value: unknown): number {
  if (value === undefined) return 0;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return Math.ceil(text.length / 3.5);
}
