/**
 * What one `runTurn` returns. When messages were steered into the turn and the CLI answered
 * them with more than one `result` line, the fields combine them: texts joined by a blank
 * line, counts, durations, costs and usage summed, `subtype`/`isError` from the first failed
 * result (else the last one).
 */
export interface TurnResult {
  result: string;
  /** The CLI's session id (from `system/init` or the `result`), null if none was seen. */
  sessionId: string | null;
  /** The API usage, numeric fields summed over the turn's results. */
  usage: Record<string, unknown>;
  /** The session's running total as the CLI reports it (cumulative per process). */
  totalCostUsd: number;
  /** What this turn cost: the growth of the CLI's running total across the turn's results. */
  costUsd: number;
  durationMs: number;
  numTurns: number;
  /** Assistant text blocks delivered through `onText` during the turn. */
  intermediateCount: number;
  subtype: string;
  isError: boolean;
}

/** A `result` line as the CLI prints it; every field is optional to a defensive reader. */
export type ResultLine = Record<string, unknown>;

function numberField(line: ResultLine, key: string): number {
  const value = line[key];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Sums numeric fields (recursively); for anything else the later value wins. */
export function sumUsage(
  total: Record<string, unknown>,
  next: Record<string, unknown>,
): Record<string, unknown> {
  const sum: Record<string, unknown> = { ...total };
  for (const [key, value] of Object.entries(next)) {
    const previous = sum[key];
    if (typeof value === "number" && typeof previous === "number") {
      sum[key] = previous + value;
    } else if (isRecord(value) && isRecord(previous)) {
      sum[key] = sumUsage(previous, value);
    } else {
      sum[key] = value;
    }
  }
  return sum;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface CombineContext {
  /** The CLI's running cost total before this turn (0 on a fresh process). */
  costBefore: number;
  intermediateCount: number;
  sessionId: string | null;
}

/** Folds the `result` lines that answered one turn into a `TurnResult`. */
export function combineResults(
  results: readonly ResultLine[],
  context: CombineContext,
): TurnResult {
  const texts = results
    .map((line) => (typeof line.result === "string" ? line.result : ""))
    .filter((text) => text !== "");
  const failed = results.find((line) => line.is_error === true);
  const decisive = failed ?? results.at(-1) ?? {};
  const totalCostUsd = results.reduce((_, line) => numberField(line, "total_cost_usd"), 0);
  let usage: Record<string, unknown> = {};
  for (const line of results) {
    if (isRecord(line.usage)) usage = sumUsage(usage, line.usage);
  }
  const lastSessionId = results
    .map((line) => line.session_id)
    .findLast((id) => typeof id === "string");
  return {
    result: texts.join("\n\n"),
    sessionId: typeof lastSessionId === "string" ? lastSessionId : context.sessionId,
    usage,
    totalCostUsd,
    costUsd: Math.max(0, totalCostUsd - context.costBefore),
    durationMs: results.reduce((sum, line) => sum + numberField(line, "duration_ms"), 0),
    numTurns: results.reduce((sum, line) => sum + numberField(line, "num_turns"), 0),
    intermediateCount: context.intermediateCount,
    subtype: typeof decisive.subtype === "string" ? decisive.subtype : "success",
    isError: decisive.is_error === true,
  };
}

/** A failure the runner itself observed (crash, stop), shaped like any other turn. */
export function failedTurn(
  subtype: string,
  message: string,
  partial: TurnResult | undefined,
  sessionId: string | null,
): TurnResult {
  return {
    result: partial?.result ? `${partial.result}\n\n${message}` : message,
    sessionId: partial?.sessionId ?? sessionId,
    usage: partial?.usage ?? {},
    totalCostUsd: partial?.totalCostUsd ?? 0,
    costUsd: partial?.costUsd ?? 0,
    durationMs: partial?.durationMs ?? 0,
    numTurns: partial?.numTurns ?? 0,
    intermediateCount: partial?.intermediateCount ?? 0,
    subtype,
    isError: true,
  };
}
