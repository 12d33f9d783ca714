import type pg from "pg";

/**
 * The `spent_link_codes` table: the nonce of each page-link code already traded for the token,
 * kept until the code would have expired anyway. One insert decides, so of two workers trading
 * the same code at once one wins; the same statement clears the expired rows.
 */
export async function spendLinkCode(
  pool: pg.Pool,
  nonce: string,
  expiresAt: Date,
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `WITH expired AS (DELETE FROM spent_link_codes WHERE expires_at < now())
     INSERT INTO spent_link_codes (nonce, expires_at) VALUES ($1, $2)
     ON CONFLICT (nonce) DO NOTHING`,
    [nonce, expiresAt],
  );
  return rowCount === 1;
}
