import type { EventBus } from "../event-bus.js";
import { storedMessage } from "../routing/settlements.js";
import type { GatewayStore } from "../store/store.js";
import type { TranscriptMirror } from "../transcripts/transcript-mirror.js";

export interface SessionTakeoverOptions {
  store: GatewayStore;
  mirror: TranscriptMirror;
  bus: EventBus;
  logger?: (line: string) => void;
}

/**
 * The session a channel resumes on the worker that just took it over: the stored one, its
 * file (and its side files) restored from the store first. When the stored transcript cannot be
 * restored (a chunk missing, a line that is not JSON), the channel starts a new conversation
 * instead of looping on a session nobody can resume: one line in the log, the session forgotten
 * in the store and its chunks deleted, and a notice in the channel saying so. A side file that
 * cannot be restored is one line in the log; the session resumes without it. A store or disk that fails is logged and the session
 * resumed as it is here. Resolves to the session to resume, or null; never rejects.
 */
export async function sessionAfterTakeover(
  options: SessionTakeoverOptions,
  channelId: string,
  sessionId: string | null,
): Promise<string | null> {
  if (sessionId === null) return null;
  const { store, mirror, bus, logger } = options;
  let outcome: Awaited<ReturnType<TranscriptMirror["restore"]>>;
  try {
    outcome = await mirror.restore(channelId, sessionId);
  } catch (error) {
    // Not the transcript's fault: resume as before (the file here, if any).
    logger?.(
      `gateway: cannot restore the transcript of session ${sessionId} (channel ${channelId}): ${String(error)}; resuming without it`,
    );
    return sessionId;
  }
  if (outcome.kind === "restored" || outcome.kind === "local") {
    const { side } = outcome;
    const files = side.restored === 1 ? "1 side file" : `${side.restored} side files`;
    if (outcome.kind === "restored") {
      const also = side.restored > 0 ? ` and ${files} (${side.bytes} bytes)` : "";
      logger?.(
        `gateway: restored the transcript of session ${sessionId} (channel ${channelId}, ${outcome.bytes} bytes)${also}`,
      );
    } else if (side.restored > 0) {
      logger?.(
        `gateway: restored ${files} of session ${sessionId} (channel ${channelId}, ${side.bytes} bytes)`,
      );
    }
    for (const problem of side.problems) {
      logger?.(
        `gateway: cannot restore a side file of session ${sessionId} (channel ${channelId}): ${problem}; resuming without it`,
      );
    }
  }
  if (outcome.kind !== "failed") return sessionId;
  logger?.(
    `gateway: cannot restore the transcript of session ${sessionId} (channel ${channelId}): ${outcome.problem}; starting a new conversation`,
  );
  await store.setChannelSession(channelId, null);
  // Nothing can resume it: its chunks go (what fails here, the periodic prune deletes later).
  await store.forgetTranscript(sessionId).catch(() => 0);
  const notice = await store.insertSystemMessage(
    channelId,
    `The earlier conversation (session ${sessionId}) could not be restored on this worker ` +
      `(${outcome.problem}), so this channel starts a new conversation.`,
  );
  bus.publish({ type: "error", message: storedMessage(notice), channelId });
  return null;
}
