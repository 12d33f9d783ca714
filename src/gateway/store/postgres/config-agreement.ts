/**
 * Workers of one database run one configuration: each running worker holds a shared session
 * advisory lock whose key is its configuration file's hash (`pg_locks` lists them, and a
 * worker that dies lets go with its connection), on a connection of its own. A worker whose
 * hash differs from one a running worker holds is refused at start; the check and the taking
 * are one transaction under an exclusive lock, so two workers starting together see each other.
 * A reload moves this worker's lock to the new hash (the others follow as they reload).
 */
import pg from "pg";

/** `classid` of the configuration locks (`rudc`); `objid` is the hash's first 28 bits. */
const CONFIG_LOCKS = 0x72756463;
/** Taken exclusively by a worker checking and joining. */
const JOINING = 0x7275646a;

/** The lock key of a configuration's hash (`null`: no configuration file). */
export function configKey(hash: string | null): number {
  return hash === null ? 0 : Number.parseInt(hash.slice(0, 7), 16) + 1;
}

/** How a key reads in a refusal: the hash's first 7 hex digits, or "none". */
function shown(key: number): string {
  return key === 0 ? "no configuration file" : (key - 1).toString(16).padStart(7, "0");
}

export class ConfigAgreement {
  readonly #url: string;
  #client: pg.Client | undefined;
  #key: number;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

  private constructor(url: string, key: number) {
    this.#url = url;
    this.#key = key;
  }

  /**
   * Joins the running workers with the configuration `hash`, or says in one line (an Error)
   * that they run another. Rejects only when the database cannot be reached.
   */
  static async join(url: string, hash: string | null): Promise<ConfigAgreement | Error> {
    const agreement = new ConfigAgreement(url, configKey(hash));
    try {
      const client = await agreement.#connect();
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock($1, 0)", [JOINING]);
      const { rows } = await client.query<{ key: string }>(
        `SELECT DISTINCT objid::bigint AS key FROM pg_locks
          WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND granted
            AND pid <> pg_backend_pid()`,
        [CONFIG_LOCKS],
      );
      const others = rows.map((row) => Number(row.key)).filter((key) => key !== agreement.#key);
      if (others.length > 0) {
        await client.query("ROLLBACK");
        await agreement.close();
        return new Error(
          `the running workers use another configuration (${others.map(shown).join(", ")}) than this worker (${shown(agreement.#key)}); start every worker with the same configuration file`,
        );
      }
      await client.query("SELECT pg_advisory_lock_shared($1, $2)", [CONFIG_LOCKS, agreement.#key]);
      await client.query("COMMIT");
      return agreement;
    } catch (error) {
      await agreement.close();
      throw error;
    }
  }

  /** This worker now runs the configuration `hash` (a reload). */
  async change(hash: string | null): Promise<void> {
    const key = configKey(hash);
    if (key === this.#key) return;
    const previous = this.#key;
    this.#key = key;
    const client = this.#client;
    if (client === undefined) return;
    await client.query("SELECT pg_advisory_lock_shared($1, $2)", [CONFIG_LOCKS, key]);
    await client.query("SELECT pg_advisory_unlock_shared($1, $2)", [CONFIG_LOCKS, previous]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.#url, keepAlive: true });
    // A lost connection lets go of the lock: it is taken again once the database is back.
    client.on("error", () => {});
    client.on("end", () => {
      if (this.#client === client) this.#client = undefined;
      if (!this.#closed) this.#again(1000);
    });
    await client.connect();
    this.#client = client;
    return client;
  }

  #again(delayMs: number): void {
    this.#retry = setTimeout(async () => {
      try {
        const client = await this.#connect();
        await client.query("SELECT pg_advisory_lock_shared($1, $2)", [CONFIG_LOCKS, this.#key]);
      } catch {
        if (!this.#closed) this.#again(Math.min(delayMs * 2, 10_000));
      }
    }, delayMs);
    this.#retry.unref();
  }
}
