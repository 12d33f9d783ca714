/**
 * What a compaction leaves behind: its trigger and the boundary the transcript records. Its own
 * module so the event union and the context keeper both read it without importing each other.
 */

/** Why the conversation was compacted: by itself near the window, or by `/compact`. */
export type CompactionTrigger = "auto" | "manual";

/** What a compaction leaves in the transcript, so a resumed session carries on from it. */
export interface CompactionBoundary {
  trigger: CompactionTrigger;
  preTokens: number;
  postTokens: number;
  durationMs: number;
  /** ISO 8601. */
  at: string;
  /** Every message the user typed before the boundary, oldest first (for the next one). */
  userTexts: string[];
}
