import type Database from "better-sqlite3";

/**
 * The `spent_link_codes` table of one gateway's SQLite store: the nonce of each page-link code
 * already traded for the token, kept until the code would have expired anyway, so that a
 * restart does not make a traded code (or the first printed link) good again. True the first
 * time a nonce is spent; the same call clears the expired rows.
 */
export function spendLinkCode(
  database: Database.Database,
  nonce: string,
  expiresAt: Date,
): boolean {
  database
    .prepare("DELETE FROM spent_link_codes WHERE expires_at < ?")
    .run(new Date().toISOString());
  const inserted = database
    .prepare("INSERT OR IGNORE INTO spent_link_codes (nonce, expires_at) VALUES (?, ?)")
    .run(nonce, expiresAt.toISOString());
  return inserted.changes === 1;
}
