import type { SpendEntry, SpendTotal } from "./store.js";

/**
 * The statement every adapter sums spend with (`$1` / `?`: the earliest time counted, given
 * twice for SQLite): the settled turns' records and the spend entries (see `SpendEntry`).
 */
export function spendQuery(placeholder: string, again = placeholder): string {
  return `SELECT channel_id, binding, COALESCE(SUM(cost_usd), 0) AS cost_usd,
      COALESCE(SUM(input_tokens), 0) AS input_tokens,
      COALESCE(SUM(output_tokens), 0) AS output_tokens
    FROM (
      SELECT channel_id, binding, cost_usd, input_tokens, output_tokens FROM turns
        WHERE created_at >= ${placeholder} AND channel_id IS NOT NULL
      UNION ALL
      SELECT channel_id, binding, cost_usd, input_tokens, output_tokens FROM spend_entries
        WHERE created_at >= ${again}
    ) AS spent
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

/** Writes or replaces a spend entry: `mark(n)` is the adapter's n-th placeholder (from 1). */
export function putSpendStatement(mark: (position: number) => string): string {
  const marks = [1, 2, 3, 4, 5, 6, 7, 8].map(mark).join(", ");
  return `INSERT INTO spend_entries (id, channel_id, binding, kind, cost_usd, input_tokens,
      output_tokens, created_at) VALUES (${marks})
    ON CONFLICT (id) DO UPDATE SET cost_usd = excluded.cost_usd,
      input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
      created_at = excluded.created_at`;
}

/** The values of `putSpendStatement`, the entry dated now. */
export function putSpendValues(entry: SpendEntry): unknown[] {
  const { id, channelId, binding, kind, costUsd, inputTokens, outputTokens } = entry;
  const now = new Date().toISOString();
  return [id, channelId, binding, kind, costUsd, inputTokens, outputTokens, now];
}
