import type { SpendTotal } from "./store.js";

/** The statement every adapter sums spend with (`$1` / `?`: the earliest time counted). */
export function spendQuery(placeholder: string): string {
  return `SELECT channel_id, binding, COALESCE(SUM(cost_usd), 0) AS cost_usd,
      COALESCE(SUM(input_tokens), 0) AS input_tokens,
      COALESCE(SUM(output_tokens), 0) AS output_tokens
    FROM turns WHERE created_at >= ${placeholder} AND channel_id IS NOT NULL
    GROUP BY channel_id, binding`;
}

/** One row of `spendQuery` (PostgreSQL gives its sums of bigints as strings). */
export interface SpendRow {
  channel_id: string;
  binding: string | null;
  cost_usd: number | string;
  input_tokens: number | string;
  output_tokens: number | string;
}

export function toSpendTotal(row: SpendRow): SpendTotal {
  return {
    channelId: row.channel_id,
    binding: row.binding,
    costUsd: Number(row.cost_usd),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
  };
}
