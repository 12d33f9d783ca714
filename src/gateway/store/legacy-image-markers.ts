/**
 * User messages stored before rudder kept attachments in their own column: the gateway then
 * wrote a line `[attached image: inbox/x.png]` into the text for each image, and the agent
 * process turned those lines into image blocks. Both stores' migrations read those lines once,
 * here, into the message's `attachments` (the text is left as it was), so such a message
 * replayed after an upgrade still shows its image; nothing reads a marker in text after that.
 */
import type { MessageAttachment } from "../events.js";

const MARKER = /^\[attached image: (inbox\/[A-Za-z0-9._-]+)\]$/gm;

const MEDIA_TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
};

/** Rows the migration reads: user messages whose text may hold a marker. */
export const LEGACY_MARKER_ROWS =
  "SELECT id, text FROM messages WHERE role = 'user' AND text LIKE '%[attached image: inbox/%'";

/** The images a legacy message's marker lines named, in order (their sizes unknown). */
export function legacyImageMarkers(text: string): MessageAttachment[] {
  return [...text.matchAll(MARKER)].flatMap((match) => {
    const path = match[1] as string;
    const mediaType = MEDIA_TYPES[path.slice(path.lastIndexOf(".") + 1).toLowerCase()];
    return mediaType === undefined ? [] : [{ kind: "image" as const, path, mediaType }];
  });
}
