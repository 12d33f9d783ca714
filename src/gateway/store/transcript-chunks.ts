/**
 * A channel's session file (rudder's transcript, or Claude Code's `<session>.jsonl`) as the store
 * keeps it: append-only chunks of bytes, each at the byte offset where it starts in the file, so
 * that a worker stores only what a turn appended and another worker can write the file again.
 */
export interface TranscriptChunk {
  offset: number;
  bytes: Buffer;
}

export interface NewTranscriptChunk extends TranscriptChunk {
  sessionId: string;
  /** The channel whose agent writes the session (its lease fences the append). */
  channelId: string;
}

/** What every store keeps of session files (see `TranscriptMirror`). */
export interface TranscriptChunks {
  /**
   * Stores a chunk. False, storing nothing, when a chunk already starts at that offset (another
   * writer got there first) or, on a shared store, when another worker holds the channel's lease.
   */
  appendTranscript(chunk: NewTranscriptChunk): Promise<boolean>;
  /**
   * Replaces every stored chunk of the session with one holding `bytes` from offset 0, in one
   * transaction (the file was rewritten, not appended to); false when fenced as above.
   */
  replaceTranscript(sessionId: string, channelId: string, bytes: Buffer): Promise<boolean>;
  /**
   * The session's chunks in offset order, those ending after byte `after` (default 0: all);
   * empty when none is stored.
   */
  transcriptChunks(sessionId: string, after?: number): Promise<TranscriptChunk[]>;
  /** Where the stored chunks end (the last chunk's offset plus its length); 0 when none. */
  transcriptLength(sessionId: string): Promise<number>;
}
