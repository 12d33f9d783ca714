/**
 * A channel's session file (rudder's transcript, or Claude Code's `<session>.jsonl`) as the store
 * keeps it: append-only chunks of bytes, each at the byte offset where it starts in the file, so
 * that a worker stores only what a turn appended and another worker can write the file again.
 * The files beside it in the session's side folder (Claude Code's `<session>/subagents/...`) are
 * kept the same way, each named by its path relative to that folder.
 */
export interface TranscriptChunk {
  offset: number;
  bytes: Buffer;
}

/** The name the session file itself is stored under; a side file's is its relative path. */
export const SESSION_FILE = "";

export interface NewTranscriptChunk extends TranscriptChunk {
  sessionId: string;
  /** The channel whose agent writes the session (its lease fences the append). */
  channelId: string;
  /** Which of the session's files; default `SESSION_FILE`. */
  file?: string;
}

/** One stored file of a session: where its chunks end, and how many there are. */
export interface StoredTranscriptFile {
  file: string;
  length: number;
  chunks: number;
}

/** What a merge did: the chunks the file has now, and the bytes written again into one. */
export interface TranscriptMerge {
  chunks: number;
  bytes: number;
}

/** What every store keeps of session files (see `TranscriptMirror`). */
export interface TranscriptChunks {
  /**
   * Stores a chunk. False, storing nothing, when a chunk already starts at that offset (another
   * writer got there first) or, on a shared store, when another worker holds the channel's lease.
   */
  appendTranscript(chunk: NewTranscriptChunk): Promise<boolean>;
  /**
   * Replaces every stored chunk of the session's `file` with one holding `bytes` from offset 0,
   * in one transaction (the file was rewritten, not appended to); false when fenced as above.
   */
  replaceTranscript(
    sessionId: string,
    channelId: string,
    bytes: Buffer,
    file?: string,
  ): Promise<boolean>;
  /**
   * The chunks of the session's `file` in offset order, those ending after byte `after`
   * (default 0: all); empty when none is stored.
   */
  transcriptChunks(sessionId: string, after?: number, file?: string): Promise<TranscriptChunk[]>;
  /** Where the stored chunks of `file` end (the last chunk's offset plus its length); 0 when none. */
  transcriptLength(sessionId: string, file?: string): Promise<number>;
  /** Every stored file of the session, the session file (`SESSION_FILE`) first, then by name. */
  transcriptFiles(sessionId: string): Promise<StoredTranscriptFile[]>;
  /**
   * Merges the newest run of the chunks of the session's `file` into one chunk up to the newest
   * offset (see `mergeRun`), in one transaction, so a restore reads few rows and never sees a
   * gap (it reads the chunks before the merge or the merged one). Undefined, changing nothing,
   * when there is no run to merge (fewer than two chunks, a gap) or when fenced as above.
   */
  compactTranscript(
    sessionId: string,
    channelId: string,
    file?: string,
  ): Promise<TranscriptMerge | undefined>;
  /**
   * Deletes every stored file of a session a channel has just left (its conversation cleared,
   * or started anew), unless a channel still names it; returns the chunks deleted.
   */
  forgetTranscript(sessionId: string): Promise<number>;
  /**
   * Deletes the stored files of every session no channel uses any more: no channel names it and
   * nothing of it was stored since `storedBefore`, unless the channel that stored it has no
   * session and was active since then (its first turn may have just begun: a channel names the
   * session once that turn's first line is read). Returns the chunks deleted.
   */
  pruneTranscripts(storedBefore: Date): Promise<number>;
}

/**
 * Which of a file's chunks (in offset order) to merge: the newest run that ends at the newest
 * offset, taken back from the newest chunk for as long as the chunk before is no bigger than the
 * run so far (and touches it). So every chunk left is bigger than all those after it together,
 * a byte is written again only into a chunk at least twice the one it was in, and a file of n
 * chunks' worth is kept in about log2(n) rows, written again a few times over (merging all into
 * one each time would write a long file again whole, turn after turn). Undefined when the newest
 * chunk is already smaller than the one before, or there are fewer than two.
 */
export function mergeRun(
  parts: ReadonlyArray<{ start: number; end: number }>,
): { from: number; end: number; merged: number } | undefined {
  const last = parts.length - 1;
  if (last < 1) return undefined;
  let first = last;
  let size = parts[last]!.end - parts[last]!.start;
  while (first > 0) {
    const before = parts[first - 1]!;
    const length = before.end - before.start;
    if (before.end !== parts[first]!.start || length > size) break;
    first -= 1;
    size += length;
  }
  if (first === last) return undefined;
  return { from: parts[first]!.start, end: parts[last]!.end, merged: last - first + 1 };
}
