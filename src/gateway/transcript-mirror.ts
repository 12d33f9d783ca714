import type { GatewayStore } from "./store/store.js";
import { isStoreUnavailable } from "./store/store-unavailable-error.js";
import { assemble, fileSize, readRange, wholeLines, writeWhole } from "./transcript-file.js";

export interface TranscriptMirrorOptions {
  store: GatewayStore;
  /** Where this machine's engine keeps a session's file (rudder's or Claude Code's). */
  sessionFile: (sessionId: string) => string;
  /** How long a save waits after the agent's output, so a burst of lines is one chunk. */
  saveDelayMs?: number;
  logger?: (line: string) => void;
}

/** The session a stream-json line names (`session_id`), if any. */
export function sessionIdOf(line: unknown): string | undefined {
  const sessionId = (line as { session_id?: unknown } | null)?.session_id;
  return typeof sessionId === "string" && sessionId !== "" ? sessionId : undefined;
}

/** How a restore before `--resume` went. */
export type RestoreOutcome =
  | { kind: "restored"; bytes: number }
  /** The file here is as long as the stored one, or longer; it is used as it is. */
  | { kind: "local" }
  /** Nothing is stored for the session. */
  | { kind: "none" }
  | { kind: "failed"; problem: string };

interface SessionState {
  /** Where the stored chunks end, as far as this worker knows; undefined until read. */
  stored: number | undefined;
  /** Saves of the session run one after another. */
  queue: Promise<void>;
}

/**
 * A channel's session file mirrored in the store, so that another worker (another machine,
 * another `--data` or HOME) can resume the conversation. The engine writes the file as always;
 * this appends to the store only what the file gained since the last save (whole lines, at
 * their byte offset), soon after the agent's output and at once before a turn's answer is
 * stored. Before a worker resumes a session whose file here is missing, shorter than the stored
 * one or different at its end, `restore` writes it from the chunks, checked first: a gap or a
 * line that is not JSON restores nothing. A file found rewritten rather than appended to is stored again whole.
 *
 * Failures are data: a save that fails is logged and tried again with the next output.
 */
export class TranscriptMirror {
  readonly #options: TranscriptMirrorOptions;
  readonly #sessions = new Map<string, SessionState>();
  /** Each channel's current session, and its pending save. */
  readonly #channels = new Map<string, { sessionId: string; timer?: NodeJS.Timeout }>();
  #closed = false;

  constructor(options: TranscriptMirrorOptions) {
    this.#options = options;
  }

  /** The channel's agent wrote output (a stream-json line): its session file is saved soon. */
  noteOutput(channelId: string, sessionId: string | undefined): void {
    if (this.#closed) return;
    let channel = this.#channels.get(channelId);
    if (sessionId !== undefined && channel?.sessionId !== sessionId) {
      if (channel?.timer) clearTimeout(channel.timer);
      channel = { sessionId };
      this.#channels.set(channelId, channel);
    }
    if (channel === undefined || channel.timer !== undefined) return;
    const pending = channel;
    pending.timer = setTimeout(() => {
      pending.timer = undefined;
      void this.#save(channelId, pending.sessionId);
    }, this.#options.saveDelayMs ?? 200);
    pending.timer.unref();
  }

  /** Saves what the channel's session file gained, now; resolves once it is stored. */
  async flush(channelId: string, sessionId?: string): Promise<void> {
    const channel = this.#channels.get(channelId);
    if (channel?.timer) {
      clearTimeout(channel.timer);
      channel.timer = undefined;
    }
    const current = sessionId ?? channel?.sessionId;
    if (current === undefined) return;
    if (channel?.sessionId !== current) this.#channels.set(channelId, { sessionId: current });
    await this.#save(channelId, current);
  }

  /**
   * Before the channel's agent resumes `sessionId` on this worker: the session file written from
   * the store when it is missing here or shorter than what the store holds. Stored chunks that
   * make no valid file are `failed`; a store or disk that cannot be used rejects.
   */
  async restore(channelId: string, sessionId: string): Promise<RestoreOutcome> {
    const session = this.#session(sessionId);
    const outcome = this.#restore(sessionId, session);
    session.queue = outcome.then(
      () => {},
      () => {},
    );
    const result = await outcome;
    if (result.kind !== "failed") this.#channels.set(channelId, { sessionId });
    return result;
  }

  /**
   * Saves what every channel's file gained (an agent stopped at shutdown may have written a last
   * record), then saves nothing more.
   */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#channels.keys()].map((channelId) => this.flush(channelId)));
    this.#closed = true;
    await Promise.allSettled([...this.#sessions.values()].map((session) => session.queue));
  }

  #session(sessionId: string): SessionState {
    let session = this.#sessions.get(sessionId);
    if (session === undefined) {
      session = { stored: undefined, queue: Promise.resolve() };
      this.#sessions.set(sessionId, session);
    }
    return session;
  }

  async #restore(sessionId: string, session: SessionState): Promise<RestoreOutcome> {
    await session.queue;
    const { store, sessionFile } = this.#options;
    const stored = await store.transcriptLength(sessionId);
    session.stored = stored;
    if (stored === 0) return { kind: "none" };
    const path = sessionFile(sessionId);
    if ((await fileSize(path)) >= stored && (await this.#sameTail(path, sessionId, stored))) {
      return { kind: "local" };
    }
    const file = assemble(await store.transcriptChunks(sessionId));
    if (!Buffer.isBuffer(file)) return { kind: "failed", problem: file.problem };
    await writeWhole(path, file);
    session.stored = file.length;
    return { kind: "restored", bytes: file.length };
  }

  /**
   * Whether the file here ends its first `stored` bytes as the store does (its last chunk), so
   * that it is the stored conversation, not one that went another way after this worker last
   * wrote it (another worker stored turns after this one's unsaved tail).
   */
  async #sameTail(path: string, sessionId: string, stored: number): Promise<boolean> {
    const last = (await this.#options.store.transcriptChunks(sessionId, stored - 1)).at(-1);
    if (last === undefined) return false;
    return (await readRange(path, last.offset, stored)).equals(last.bytes);
  }

  #save(channelId: string, sessionId: string): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const session = this.#session(sessionId);
    session.queue = session.queue.then(() =>
      this.#saveNow(channelId, sessionId, session).catch((error: unknown) => {
        // Read again from the store next time: the failed append may have landed.
        session.stored = undefined;
        // A store that is down says so once itself; the next save after it is back catches up.
        if (isStoreUnavailable(error)) return;
        this.#options.logger?.(
          `gateway: cannot store the transcript of session ${sessionId} (channel ${channelId}): ${String(error)}`,
        );
      }),
    );
    return session.queue;
  }

  async #saveNow(channelId: string, sessionId: string, session: SessionState): Promise<void> {
    const { store, sessionFile, logger } = this.#options;
    const path = sessionFile(sessionId);
    const size = await fileSize(path);
    if (size <= 0) return;
    session.stored ??= await store.transcriptLength(sessionId);
    const stored = session.stored;
    if (size === stored) return;
    // Chunks end at line ends, so the byte before the stored end is a newline unless the file
    // was rewritten (or shortened) rather than appended to.
    const from = Math.max(0, stored - 1);
    const read = size > stored ? await readRange(path, from, size) : Buffer.alloc(0);
    if (size < stored || (stored > 0 && read[0] !== 0x0a)) {
      const whole = wholeLines(await readRange(path, 0, size));
      if (await store.replaceTranscript(sessionId, channelId, whole)) session.stored = whole.length;
      else session.stored = undefined;
      return;
    }
    const appended = wholeLines(stored > 0 ? read.subarray(1) : read);
    if (appended.length === 0) return;
    if (await store.appendTranscript({ sessionId, channelId, offset: stored, bytes: appended })) {
      session.stored = stored + appended.length;
      return;
    }
    session.stored = undefined;
    logger?.(
      `gateway: the transcript of session ${sessionId} (channel ${channelId}) was not stored at byte ${stored}: another worker holds the channel or stored that part`,
    );
  }
}
