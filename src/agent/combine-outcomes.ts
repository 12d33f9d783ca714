import { addUsage } from "../model/types.js";
import type { TurnOutcome } from "./events.js";

/** One outcome for two consecutive runs of the loop (a turn and its wake-up). */
export function combineOutcomes(first: TurnOutcome, second: TurnOutcome): TurnOutcome {
  return {
    ...second,
    result: second.result || first.result,
    numTurns: first.numTurns + second.numTurns,
    durationMs: first.durationMs + second.durationMs,
    usage: addUsage(first.usage, second.usage),
    totalCostUsd: first.totalCostUsd + second.totalCostUsd,
  };
}
