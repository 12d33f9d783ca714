/**
 * A cheap, deliberately generous count of the tokens a piece of a request takes: one per
 * 3.5 characters of its JSON. The Messages API's tokenizer gives about four characters
 * per token of English and fewer of code; erring high makes compaction come early, never
 * late. Only what was added since the last reported usage is estimated. An image counts as
 * what the API charges for the largest it takes (about 1,600 tokens), not its base64 length.
 */
const IMAGE_TOKENS = 1600;

export function estimateTokens(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value === "string") return Math.ceil(value.length / 3.5);
  let images = 0;
  const text = JSON.stringify(value, (key, field: unknown) => {
    if (key === "source" && typeof field === "object" && field !== null) {
      const source = field as { type?: unknown; data?: unknown };
      if (source.type === "base64" && typeof source.data === "string") {
        images += 1;
        return null;
      }
    }
    return field;
  });
  return Math.ceil((text?.length ?? 0) / 3.5) + images * IMAGE_TOKENS;
}
