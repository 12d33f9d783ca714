import type pg from "pg";

/** Who drives a channel now, by the database's clock. */
export interface LeaseHolder {
  owner: string;
  live: boolean;
}

/**
 * The leases of one worker on the channels it drives: a row per channel (owner, expiry), every
 * time taken from the database's clock so that workers' clocks may disagree. Each method is
 * one statement, atomic on its own: of two workers claiming a free or expired channel at once,
 * exactly one gets it (`INSERT ... ON CONFLICT DO UPDATE ... WHERE`, which locks the row).
 */
export class ChannelLeases {
  readonly #pool: pg.Pool;
  readonly worker: string;
  readonly seconds: number;

  constructor(pool: pg.Pool, worker: string, seconds: number) {
    this.#pool = pool;
    this.worker = worker;
    this.seconds = seconds;
  }

  /** Takes (or renews) the channel's lease unless another worker holds it unexpired. */
  async claim(channelId: string): Promise<boolean> {
    const result = await this.#pool.query(
      `INSERT INTO leases (channel_id, owner, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3))
       ON CONFLICT (channel_id) DO UPDATE
         SET owner = excluded.owner, expires_at = excluded.expires_at
         WHERE leases.owner = excluded.owner OR leases.expires_at < now()
       RETURNING channel_id`,
      [channelId, this.worker, this.seconds],
    );
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * Takes every channel that has unanswered messages and no live owner (its worker died, or
   * stopped before driving it); returns those taken. Each is taken by `claim`, so of two
   * workers sweeping at once each channel goes to one.
   */
  async claimOrphans(): Promise<string[]> {
    const { rows } = await this.#pool.query<{ channel_id: string }>(
      `SELECT DISTINCT m.channel_id FROM messages m
       WHERE m.kind = 'user' AND m.state IN ('received', 'steered', 'deferred')
         AND NOT EXISTS (
           SELECT 1 FROM leases l WHERE l.channel_id = m.channel_id AND l.expires_at >= now()
         )
       ORDER BY m.channel_id`,
    );
    const taken: string[] = [];
    for (const { channel_id: channelId } of rows) {
      if (await this.claim(channelId)) taken.push(channelId);
    }
    return taken;
  }

  /** Extends every lease this worker holds; returns the channels it still holds. */
  async renew(): Promise<string[]> {
    const { rows } = await this.#pool.query<{ channel_id: string }>(
      `UPDATE leases SET expires_at = now() + make_interval(secs => $2)
       WHERE owner = $1 RETURNING channel_id`,
      [this.worker, this.seconds],
    );
    return rows.map((row) => row.channel_id).sort();
  }

  async holder(channelId: string): Promise<LeaseHolder | null> {
    const { rows } = await this.#pool.query<LeaseHolder>(
      "SELECT owner, expires_at >= now() AS live FROM leases WHERE channel_id = $1",
      [channelId],
    );
    return rows[0] ?? null;
  }

  /** Gives up the channel's lease if this worker holds it. */
  async release(channelId: string): Promise<void> {
    await this.#pool.query("DELETE FROM leases WHERE channel_id = $1 AND owner = $2", [
      channelId,
      this.worker,
    ]);
  }

  /** Gives up every lease this worker holds (a clean shutdown hands its channels over at once). */
  async releaseAll(): Promise<void> {
    await this.#pool.query("DELETE FROM leases WHERE owner = $1", [this.worker]);
  }
}
