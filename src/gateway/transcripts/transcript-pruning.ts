import { isStoreUnavailable } from "../store/store-unavailable-error.js";
import type { TranscriptChunks } from "../store/transcript-chunks.js";

export interface TranscriptPruningOptions {
  store: Pick<TranscriptChunks, "pruneTranscripts">;
  /** How often to look (default every 10 minutes); the first look is one interval after start. */
  everyMs?: number;
  /** How long a session no channel names keeps its chunks after its last one (default a day). */
  keepUnusedMs?: number;
  logger?: (line: string) => void;
}

/**
 * Deletes, now and then, the stored transcripts of sessions no channel uses any more (see
 * `pruneTranscripts`): what a cleared conversation left if its deletion at `/clear` failed, a
 * session a channel moved on from, a session whose first turn never ended. A session a channel
 * uses is kept however long its turn stays silent: the channel names it from the turn's first
 * line (`system/init`), before its file is first stored. Every worker may run it: deleting twice
 * deletes nothing more. A store that is down is skipped until the next look; `stop` waits for a
 * look in flight.
 */
export function startTranscriptPruning(options: TranscriptPruningOptions): {
  stop(): Promise<void>;
} {
  const { store, logger } = options;
  const keepUnusedMs = options.keepUnusedMs ?? 24 * 60 * 60 * 1000;
  let running: Promise<void> = Promise.resolve();
  const look = async () => {
    try {
      const deleted = await store.pruneTranscripts(new Date(Date.now() - keepUnusedMs));
      if (deleted > 0) {
        logger?.(
          `gateway: deleted ${deleted} stored transcript chunks of sessions no channel uses`,
        );
      }
    } catch (error) {
      if (!isStoreUnavailable(error)) {
        logger?.(`gateway: cannot prune stored transcripts: ${String(error)}`);
      }
    }
  };
  const timer = setInterval(
    () => {
      running = running.then(look);
    },
    options.everyMs ?? 10 * 60 * 1000,
  );
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
