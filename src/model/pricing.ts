import type { Usage } from "./types.js";

/** US dollars per million tokens. */
interface Prices {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

/** Cache writes (5-minute) cost 1.25x input and cache reads 0.1x, across the families. */
function prices(input: number, output: number): Prices {
  return { input, output, cacheWrite: input * 1.25, cacheRead: input * 0.1 };
}

/**
 * Published list prices by model family, first match wins, so older and pricier
 * generations come before the family default. Models not listed cost 0: an
 * unknown price is reported as nothing rather than guessed.
 */
const PRICE_TABLE: ReadonlyArray<readonly [RegExp, Prices]> = [
  [/claude-3-opus|opus-4-0|opus-4-1|opus-4-2025/, prices(15, 75)],
  [/opus/, prices(5, 25)],
  [/sonnet/, prices(3, 15)],
  [/claude-3-haiku/, prices(0.25, 1.25)],
  [/claude-3-5-haiku/, prices(0.8, 4)],
  [/haiku/, prices(1, 5)],
];

export function pricesFor(model: string): Prices | undefined {
  const name = model.toLowerCase();
  return PRICE_TABLE.find(([pattern]) => pattern.test(name))?.[1];
}

/** The cost of `usage` on `model` in US dollars; 0 for models without a known price. */
export function costUsd(model: string, usage: Usage): number {
  const price = pricesFor(model);
  if (price === undefined) return 0;
  const total =
    usage.input_tokens * price.input +
    usage.output_tokens * price.output +
    usage.cache_creation_input_tokens * price.cacheWrite +
    usage.cache_read_input_tokens * price.cacheRead;
  return total / 1_000_000;
}
