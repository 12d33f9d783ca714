/**
 * How many tokens a model's context window holds, as Claude Code 2.1.328 reports it in
 * `modelUsage[model].contextWindow` (measured against the fake Messages API): the fifth
 * generation (`claude-*-5-*`) has 1,000,000 tokens, older Claude models the Messages API's
 * 200,000. A model rudder does not know gets 200,000, the smaller and safer guess.
 */
export const DEFAULT_CONTEXT_WINDOW = 200_000;
const LARGE_CONTEXT_WINDOW = 1_000_000;

const FIFTH_GENERATION = /^claude-(?:opus|sonnet|haiku)-5(?:-|$)/;

export function contextWindowFor(model: string): number {
  return FIFTH_GENERATION.test(model) ? LARGE_CONTEXT_WINDOW : DEFAULT_CONTEXT_WINDOW;
}

/** The largest reply the model may write, as Claude Code reports it (`maxOutputTokens`). */
export function maxOutputTokensFor(model: string): number {
  if (FIFTH_GENERATION.test(model)) return 128_000;
  return /claude-3/.test(model) ? 8192 : 32_000;
}

/**
 * A window size from the environment or a setting: a positive whole number of tokens
 * (`_` and `,` separators allowed, `k` for thousands). Undefined when absent or invalid.
 */
export function parseContextWindow(text: string | number | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (typeof text === "number") return Number.isSafeInteger(text) && text > 0 ? text : undefined;
  const match = /^(\d+(?:\.\d+)?)(k?)$/i.exec(text.trim().replace(/[_,]/g, ""));
  if (match === null) return undefined;
  const value = Math.round(Number(match[1]) * (match[2] === "" ? 1 : 1000));
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}
