import { statSync, unlinkSync } from "node:fs";
import type { Message } from "../model/types.js";
import {
  isValidSessionId,
  readTranscript,
  type TranscriptFile,
  type TranscriptSegment,
  type TranscriptStore,
} from "./transcript-store.js";

/**
 * What is stored: lists, reads and removes the transcripts of a `TranscriptStore`, for
 * people looking for a conversation to resume and for cleaning up. Failures are data: an
 * unreadable or corrupt transcript becomes an `UnreadableSession`, never an exception.
 */

export interface SessionSummary {
  id: string;
  /** The folder the session was started in (realpath'd, as the header records it). */
  cwd: string;
  /** From the header, as written (ISO 8601). */
  createdAt: string;
  /** The file's last modification. */
  updatedAt: Date;
  /** Messages on disk (a user prompt, an assistant reply, tool results: one each), every
   * compacted part included. */
  messages: number;
  /** Compactions the conversation went through. */
  compactions: number;
  /** The text of the first user message (before any compaction); undefined when there is none. */
  firstPrompt: string | undefined;
}

export interface UnreadableSession {
  id: string;
  updatedAt: Date;
  /** Why, in a few words: `not a rudder transcript (no session header)`, an I/O error. */
  problem: string;
}

export interface SessionTranscript {
  summary: SessionSummary;
  /** The stored messages since the last compaction, not repaired for the API. */
  history: Message[];
  /** Every part of the conversation, oldest first, each after the boundary that opened it. */
  segments: TranscriptSegment[];
}

export type TranscriptLookup =
  | { ok: true; transcript: SessionTranscript }
  | { ok: false; reason: "not-found" }
  | { ok: false; reason: "unreadable"; problem: string };

export type RemoveOutcome =
  | { ok: true }
  | { ok: false; reason: "invalid-id" }
  | { ok: false; reason: "not-found" }
  | { ok: false; reason: "failed"; problem: string };

export interface SessionListing {
  /** Newest first. */
  sessions: SessionSummary[];
  /** Met while listing (for a `cwd` filter, their folder is unknown), newest first. */
  unreadable: UnreadableSession[];
}

export interface PrunedSession {
  id: string;
  updatedAt: Date;
  /** Undefined for a transcript that could not be read. */
  cwd: string | undefined;
}

export interface PruneResult {
  /** Removed, or that would be with `dryRun`; oldest first. */
  removed: PrunedSession[];
  failed: Array<PrunedSession & { problem: string }>;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstPromptOf(history: readonly Message[]): string | undefined {
  for (const message of history) {
    if (message.role !== "user") continue;
    if (typeof message.content === "string") return message.content;
    const texts = message.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
    if (texts.length > 0) return texts.join("\n");
  }
  return undefined;
}

type Examined =
  | { ok: true; transcript: SessionTranscript }
  | { ok: false; unreadable: UnreadableSession };

function examine(file: TranscriptFile): Examined {
  const updatedAt = new Date(file.mtimeMs);
  let read: ReturnType<typeof readTranscript>;
  try {
    read = readTranscript(file.path);
  } catch (error) {
    return { ok: false, unreadable: { id: file.id, updatedAt, problem: describeError(error) } };
  }
  const { header, history, segments } = read;
  if (header === undefined || typeof header.cwd !== "string") {
    const problem = "not a rudder transcript (no session header)";
    return { ok: false, unreadable: { id: file.id, updatedAt, problem } };
  }
  const summary: SessionSummary = {
    id: file.id,
    cwd: header.cwd,
    createdAt: typeof header.created_at === "string" ? header.created_at : "",
    updatedAt,
    messages: segments.reduce((count, segment) => count + segment.messages.length, 0),
    compactions: segments.length - 1,
    firstPrompt: firstPromptOf(segments[0]?.messages ?? history),
  };
  return { ok: true, transcript: { summary, history, segments } };
}

/** Reads, lists and removes the transcripts of one store. */
export class SessionCatalog {
  readonly #store: TranscriptStore;

  constructor(store: TranscriptStore) {
    this.#store = store;
  }

  /** Files named after a valid session id; the others cannot be resumed or removed by id. */
  #files(): TranscriptFile[] {
    return this.#store.files().filter((file) => isValidSessionId(file.id));
  }

  /**
   * Sessions newest first, only those started in `cwd` when given (compared as stored, so
   * pass a realpath), at most `limit` of them. Files are read newest first and reading
   * stops once `limit` sessions are found.
   */
  list(options: { cwd?: string; limit?: number } = {}): SessionListing {
    const listing: SessionListing = { sessions: [], unreadable: [] };
    for (const file of this.#files()) {
      if (options.limit !== undefined && listing.sessions.length >= options.limit) break;
      const examined = examine(file);
      if (!examined.ok) {
        listing.unreadable.push(examined.unreadable);
        continue;
      }
      const { summary } = examined.transcript;
      if (options.cwd === undefined || summary.cwd === options.cwd) listing.sessions.push(summary);
    }
    return listing;
  }

  /** One session's summary and stored messages. */
  read(sessionId: string): TranscriptLookup {
    if (!isValidSessionId(sessionId)) return { ok: false, reason: "not-found" };
    const path = this.#store.pathOf(sessionId);
    let mtimeMs: number;
    try {
      const stats = statSync(path);
      if (!stats.isFile()) return { ok: false, reason: "unreadable", problem: "not a file" };
      mtimeMs = stats.mtimeMs;
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT")
        return { ok: false, reason: "not-found" };
      return { ok: false, reason: "unreadable", problem: describeError(error) };
    }
    const examined = examine({ id: sessionId, path, mtimeMs });
    if (!examined.ok)
      return { ok: false, reason: "unreadable", problem: examined.unreadable.problem };
    return { ok: true, transcript: examined.transcript };
  }

  /** Deletes one transcript. The id is checked before the file system is touched. */
  remove(sessionId: string): RemoveOutcome {
    if (!isValidSessionId(sessionId)) return { ok: false, reason: "invalid-id" };
    try {
      unlinkSync(this.#store.pathOf(sessionId));
      return { ok: true };
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT")
        return { ok: false, reason: "not-found" };
      return { ok: false, reason: "failed", problem: describeError(error) };
    }
  }

  /**
   * Removes every transcript (of any folder, readable or not) last modified before
   * `now - olderThanMs`. A file is looked at again just before it goes, so one written to
   * meanwhile stays.
   */
  prune(options: { olderThanMs: number; now?: Date; dryRun?: boolean }): PruneResult {
    const cutoff = (options.now ?? new Date()).getTime() - options.olderThanMs;
    const result: PruneResult = { removed: [], failed: [] };
    const old = this.#files()
      .filter((file) => file.mtimeMs < cutoff)
      .reverse();
    for (const file of old) {
      const examined = examine(file);
      const pruned: PrunedSession = {
        id: file.id,
        updatedAt: new Date(file.mtimeMs),
        cwd: examined.ok ? examined.transcript.summary.cwd : undefined,
      };
      if (options.dryRun) {
        result.removed.push(pruned);
        continue;
      }
      try {
        if (statSync(file.path).mtimeMs >= cutoff) continue;
        unlinkSync(file.path);
        result.removed.push(pruned);
      } catch (error) {
        if ((error as { code?: unknown }).code === "ENOENT") continue;
        result.failed.push({ ...pruned, problem: describeError(error) });
      }
    }
    return result;
  }
}
