import type { GatewayStore } from "../store/store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";
import { SESSION_FILE } from "../store/transcript-chunks.js";
import {
  assemble,
  fileSize,
  fileStamp,
  isBeingWritten,
  isInsideFolder,
  isJsonLines,
  readRange,
  sideFiles,
  sideFolderOf,
  wholeLines,
  writeWhole,
} from "./transcript-file.js";

export interface TranscriptMirrorOptions {
  store: GatewayStore;
  /**
   * Where this machine's engine keeps a session's file (rudder's or Claude Code's), for the
   * channel it was last seen in (its binding's engine and folder; undefined: not seen yet).
   */
  sessionFile: (sessionId: string, channelId: string | undefined) => string;
  /** How long a save waits after the agent's output, so a burst of lines is one chunk. */
  saveDelayMs?: number;
  /**
   * After that save, how long after it the files are looked at again, one after the other
   * (default 1 s, then 5 s more), unless the agent says more first: an engine may write its
   * file after its last line (Claude Code writes a turn's prompt about when it prints the
   * line that starts the turn, on a loaded machine after it), and a turn that waits long for
   * its model says nothing more until it ends.
   */
  lookAgainMs?: number[];
  /** A file's newest chunks are merged once it has more than this many (default 32). */
  compactAfter?: number;
  logger?: (line: string) => void;
}

/** The session a stream-json line names (`session_id`), if any. */
export function sessionIdOf(line: unknown): string | undefined {
  const sessionId = (line as { session_id?: unknown } | null)?.session_id;
  return typeof sessionId === "string" && sessionId !== "" ? sessionId : undefined;
}

/** What a restore did with the session's side files (Claude Code's subagent transcripts). */
export interface SideFilesRestored {
  /** Files written from the store (missing here, shorter, or different at their end). */
  restored: number;
  bytes: number;
  /** One line per stored side file that makes no valid file (left as it is here). */
  problems: string[];
}

/** How a restore before `--resume` went. */
export type RestoreOutcome =
  | { kind: "restored"; bytes: number; side: SideFilesRestored }
  /** The file here is as long as the stored one, or longer; it is used as it is. */
  | { kind: "local"; side: SideFilesRestored }
  /** Nothing is stored for the session. */
  | { kind: "none" }
  | { kind: "failed"; problem: string };

/** Looks again at a channel's files after the save that followed its agent's output (ms). */
const LOOK_AGAIN_MS = [1000, 5000];

/** A channel's current session, and its save to come, if any. */
interface PendingSave {
  sessionId: string;
  timer?: NodeJS.Timeout | undefined;
  /** With `timer`: undefined for the save after output, else the looks again before this one. */
  lookedAgain?: number | undefined;
}

/** What is stored of one of the session's files, as far as this worker knows. */
interface StoredFile {
  length: number;
  chunks: number;
  /** A file stored whole: the size and time it had when stored (or restored) here. */
  stamp?: string | undefined;
}

interface SessionState {
  /** The session's stored files by name; undefined until read from the store. */
  files: Map<string, StoredFile> | undefined;
  /** Saves of the session run one after another. */
  queue: Promise<void>;
}

/**
 * A channel's session file mirrored in the store, so that another worker (another machine,
 * another `--data` or HOME) can resume the conversation; and with it the files its engine keeps
 * in the session's side folder (`sideFolderOf`: Claude Code's subagent transcripts), each under
 * its relative path. The engine writes the files as always; this appends to the store only what
 * a JSON-lines file gained since the last save (whole lines, at their byte offset), and stores
 * any other side file whole when it changed, soon after the agent's output and at once before a
 * turn's answer is stored. Once a file has more than `compactAfter` chunks, its newest run of
 * them is merged into one (`mergeRun`), so a restore reads few rows. Before a worker resumes a session whose file here is
 * missing, shorter than the stored one or different at its end, `restore` writes it from the
 * chunks, checked first: a gap or a line that is not JSON restores nothing. A file found
 * rewritten rather than appended to is stored again whole.
 *
 * Failures are data: a save that fails is logged and tried again with the next output.
 */
export class TranscriptMirror {
  readonly #options: TranscriptMirrorOptions;
  readonly #sessions = new Map<string, SessionState>();
  /** Each channel's current session, and its pending save. */
  readonly #channels = new Map<string, PendingSave>();
  /** The channel each session was last seen in: its binding says where its file is. */
  readonly #channelOf = new Map<string, string>();
  #closed = false;

  constructor(options: TranscriptMirrorOptions) {
    this.#options = options;
  }

  /** The session's file, for the channel it was last seen in. */
  #sessionFile(sessionId: string): string {
    return this.#options.sessionFile(sessionId, this.#channelOf.get(sessionId));
  }

  #seen(channelId: string, sessionId: string | undefined): void {
    if (sessionId !== undefined) this.#channelOf.set(sessionId, channelId);
  }

  /** The channel's agent wrote output (a stream-json line): its session file is saved soon. */
  noteOutput(channelId: string, sessionId: string | undefined): void {
    if (this.#closed) return;
    this.#seen(channelId, sessionId);
    let channel = this.#channels.get(channelId);
    if (sessionId !== undefined && channel?.sessionId !== sessionId) {
      if (channel?.timer) clearTimeout(channel.timer);
      channel = { sessionId };
      this.#channels.set(channelId, channel);
    }
    if (channel === undefined) return;
    if (channel.timer !== undefined) {
      // A save after output is already coming; a look again is replaced by one.
      if (channel.lookedAgain === undefined) return;
      clearTimeout(channel.timer);
    }
    this.#arm(channelId, channel, this.#options.saveDelayMs ?? 200, undefined);
  }

  /** A save of the channel's files in `delayMs`; `lookedAgain`: how many looks again before. */
  #arm(channelId: string, pending: PendingSave, delayMs: number, lookedAgain: number | undefined) {
    pending.lookedAgain = lookedAgain;
    pending.timer = setTimeout(() => {
      pending.timer = undefined;
      void this.#save(channelId, pending.sessionId);
      const next = lookedAgain === undefined ? 0 : lookedAgain + 1;
      const after = (this.#options.lookAgainMs ?? LOOK_AGAIN_MS)[next];
      if (after === undefined || this.#closed || this.#channels.get(channelId) !== pending) return;
      this.#arm(channelId, pending, after, next);
    }, delayMs);
    pending.timer.unref();
  }

  /** Saves what the channel's session files gained, now; resolves once it is stored. */
  async flush(channelId: string, sessionId?: string): Promise<void> {
    const channel = this.#channels.get(channelId);
    if (channel?.timer) {
      clearTimeout(channel.timer);
      channel.timer = undefined;
    }
    const current = sessionId ?? channel?.sessionId;
    if (current === undefined) return;
    this.#seen(channelId, current);
    if (channel?.sessionId !== current) this.#channels.set(channelId, { sessionId: current });
    await this.#save(channelId, current);
  }

  /**
   * Before the channel's agent resumes `sessionId` on this worker: the session file written from
   * the store when it is missing here or shorter than what the store holds, and so is each of
   * its side files. Stored chunks of the session file that make no valid file are `failed`
   * (nothing written); a side file's are a problem in `side.problems` (that file left as it
   * is). A store or disk that cannot be used rejects.
   */
  async restore(channelId: string, sessionId: string): Promise<RestoreOutcome> {
    this.#seen(channelId, sessionId);
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
      session = { files: undefined, queue: Promise.resolve() };
      this.#sessions.set(sessionId, session);
    }
    return session;
  }

  async #storedFiles(sessionId: string): Promise<Map<string, StoredFile>> {
    const stored = await this.#options.store.transcriptFiles(sessionId);
    return new Map(stored.map(({ file, length, chunks }) => [file, { length, chunks }]));
  }

  #pathOf(sessionId: string, file: string): string {
    const sessionFile = this.#sessionFile(sessionId);
    return file === SESSION_FILE ? sessionFile : `${sideFolderOf(sessionFile)}/${file}`;
  }

  async #restore(sessionId: string, session: SessionState): Promise<RestoreOutcome> {
    await session.queue;
    const files = await this.#storedFiles(sessionId);
    session.files = files;
    const main = files.get(SESSION_FILE);
    if (main === undefined) return { kind: "none" };
    const restored = await this.#restoreFile(sessionId, SESSION_FILE, main);
    if (typeof restored === "object") return { kind: "failed", problem: restored.problem };
    const side: SideFilesRestored = { restored: 0, bytes: 0, problems: [] };
    for (const [file, stored] of files) {
      // One stored mid-write (before such files were skipped) was renamed away on its worker.
      if (file === SESSION_FILE || isBeingWritten(file)) continue;
      if (!isInsideFolder(file)) {
        side.problems.push(`${JSON.stringify(file)} is not a path inside the session's folder`);
        continue;
      }
      const written = await this.#restoreFile(sessionId, file, stored);
      if (typeof written === "object") side.problems.push(`${file}: ${written.problem}`);
      else if (written > 0) {
        side.restored += 1;
        side.bytes += written;
      }
    }
    return restored > 0 ? { kind: "restored", bytes: restored, side } : { kind: "local", side };
  }

  /** Bytes written for one stored file, 0 when the file here is already it, or the problem. */
  async #restoreFile(
    sessionId: string,
    file: string,
    stored: StoredFile,
  ): Promise<number | { problem: string }> {
    const path = this.#pathOf(sessionId, file);
    if (
      (await fileSize(path)) >= stored.length &&
      (await this.#sameTail(path, sessionId, file, stored.length))
    ) {
      return 0;
    }
    const chunks = await this.#options.store.transcriptChunks(sessionId, 0, file);
    const bytes = assemble(chunks, isJsonLines(file));
    if (!Buffer.isBuffer(bytes)) return bytes;
    await writeWhole(path, bytes);
    stored.length = bytes.length;
    stored.chunks = chunks.length;
    if (!isJsonLines(file)) stored.stamp = await fileStamp(path);
    return Math.max(1, bytes.length);
  }

  /**
   * Whether the file here ends its first `stored` bytes as the store does (its last chunk), so
   * that it is the stored conversation, not one that went another way after this worker last
   * wrote it (another worker stored turns after this one's unsaved tail).
   */
  async #sameTail(path: string, sessionId: string, file: string, stored: number) {
    const last = (await this.#options.store.transcriptChunks(sessionId, stored - 1, file)).at(-1);
    if (last === undefined) return false;
    return (await readRange(path, last.offset, stored)).equals(last.bytes);
  }

  #save(channelId: string, sessionId: string): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const session = this.#session(sessionId);
    session.queue = session.queue.then(() =>
      this.#saveNow(channelId, sessionId, session).catch((error: unknown) => {
        // Read again from the store next time: the failed write may have landed.
        session.files = undefined;
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
    const sessionFile = this.#sessionFile(sessionId);
    if ((await fileSize(sessionFile)) <= 0) return;
    const names = [SESSION_FILE, ...(await sideFiles(sideFolderOf(sessionFile)))];
    session.files ??= await this.#storedFiles(sessionId);
    const files = session.files;
    for (const file of names) {
      let stored = files.get(file);
      if (stored === undefined) {
        stored = { length: 0, chunks: 0 };
        files.set(file, stored);
      }
      const kept = isJsonLines(file)
        ? await this.#saveLines(channelId, sessionId, file, stored)
        : await this.#saveWhole(channelId, sessionId, file, stored);
      if (kept) continue;
      // Read again from the store next time.
      session.files = undefined;
      this.#options.logger?.(
        `gateway: the transcript of session ${sessionId} (channel ${channelId}${file === SESSION_FILE ? "" : `, file ${file}`}) was not stored at byte ${stored.length}: another worker holds the channel or stored that part`,
      );
      return;
    }
  }

  /** Appends what a JSON-lines file gained; false when the store took none of it (fenced). */
  async #saveLines(channelId: string, sessionId: string, file: string, stored: StoredFile) {
    const { store } = this.#options;
    const path = this.#pathOf(sessionId, file);
    const size = await fileSize(path);
    if (size <= 0 || size === stored.length) return true;
    // Chunks end at line ends, so the byte before the stored end is a newline unless the file
    // was rewritten (or shortened) rather than appended to.
    const from = Math.max(0, stored.length - 1);
    const read = size > stored.length ? await readRange(path, from, size) : Buffer.alloc(0);
    if (size < stored.length || (stored.length > 0 && read[0] !== 0x0a)) {
      const whole = wholeLines(await readRange(path, 0, size));
      if (!(await store.replaceTranscript(sessionId, channelId, whole, file))) return false;
      stored.length = whole.length;
      stored.chunks = 1;
      return true;
    }
    const appended = wholeLines(stored.length > 0 ? read.subarray(1) : read);
    if (appended.length === 0) return true;
    const chunk = { sessionId, channelId, file, offset: stored.length, bytes: appended };
    if (!(await store.appendTranscript(chunk))) return false;
    stored.length += appended.length;
    stored.chunks += 1;
    if (stored.chunks > (this.#options.compactAfter ?? 32)) {
      const merge = await store.compactTranscript(sessionId, channelId, file);
      // Nothing to merge now (a gap, say): looked at again after as many more chunks.
      stored.chunks = merge?.chunks ?? 0;
    }
    return true;
  }

  /** Stores a side file that is not JSON lines whole, when it changed since stored here. */
  async #saveWhole(channelId: string, sessionId: string, file: string, stored: StoredFile) {
    const { store } = this.#options;
    const path = this.#pathOf(sessionId, file);
    const stamp = await fileStamp(path);
    if (stamp === undefined || stamp === stored.stamp) return true;
    const bytes = await readRange(path, 0, await fileSize(path));
    if (stored.stamp === undefined && stored.length === bytes.length) {
      // Stored before this worker saw it (another worker, or a restart): compare once.
      const same = assemble(await store.transcriptChunks(sessionId, 0, file), false);
      if (Buffer.isBuffer(same) && same.equals(bytes)) {
        stored.stamp = stamp;
        return true;
      }
    }
    if (!(await store.replaceTranscript(sessionId, channelId, bytes, file))) return false;
    stored.length = bytes.length;
    stored.chunks = 1;
    stored.stamp = stamp;
    return true;
  }
}
