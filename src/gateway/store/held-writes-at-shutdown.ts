import type { PatientWrites } from "./patient-writes.js";
import type { GatewayStore } from "./store.js";

export interface HeldWritesAtShutdown {
  writes: PatientWrites<GatewayStore>;
  /** Whether the store can be reached now. */
  storeUp: () => boolean;
  /** How long to wait for the store at most. */
  waitMs: number;
  logger: (line: string) => void;
}

/** At most this many writes are named in a line; the rest are counted. */
const NAMED = 20;

function named(writes: string[]): string {
  const more = writes.length - NAMED;
  return `${writes.slice(0, NAMED).join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
}

/**
 * A clean shutdown's wait for the writes a worker holds (answers of turns that ended while the
 * store was unavailable, see `patientWrites`): with none, at once; else up to `waitMs` for the
 * store to come back and take them, saying so in one line when the store is down (what is held,
 * how long at most). If the wait runs out, one more line names what was not stored: those
 * messages stay unanswered, and the next owner of their channels replays them. Resolves with
 * whether everything was stored; the caller then lets go of what is left.
 */
export async function waitForHeldWrites(options: HeldWritesAtShutdown): Promise<boolean> {
  const { writes, waitMs, logger } = options;
  const held = writes.pending();
  if (held.length === 0) return true;
  const seconds = Math.round(waitMs / 100) / 10;
  if (!options.storeUp()) {
    logger(
      `gateway: stopping while the store is unavailable; waiting up to ${seconds} s for it to store what this worker holds: ${named(held)}`,
    );
  }
  const timeout = new AbortController();
  // Not `AbortSignal.timeout`: its timer does not keep the process alive through the wait.
  const timer = setTimeout(() => timeout.abort(), waitMs);
  const drained = await writes.drained(timeout.signal);
  clearTimeout(timer);
  if (drained) return true;
  logger(
    `gateway: the store did not come back within ${seconds} s; not stored: ${named(writes.pending())} (their messages stay unanswered, for the next owner of their channels to answer again)`,
  );
  return false;
}
