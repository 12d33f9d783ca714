/**
 * Images a person sent, shown to the model. The gateway saves an image into the workspace's
 * `inbox/` and puts a marker line for it in the message text (`[attached image: inbox/x.png]`),
 * which is what the store keeps; as the user line is written to the agent (either engine), each
 * marker's file is read from the agent's folder and added as an image content block after the
 * text. A marker whose file is gone, too big, a symlink or not an image stays text only.
 */
import { lstatSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";

/** The largest image shown to the model, in bytes (the Messages API takes 5 MB of base64). */
export const MAX_IMAGE_BYTES = 3_750_000;
/** All images of one message together, so the line stays under the framing cap. */
const MAX_IMAGES_BYTES = 10_000_000;

const MEDIA_TYPES: Record<string, string> = {
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".png": "image/png",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

const MARKER = /^\[attached image: (inbox\/[A-Za-z0-9._-]+)\]$/gm;

/** The media type the model takes for an image file name, or undefined if it takes none. */
export function imageMediaType(name: string): string | undefined {
  return MEDIA_TYPES[extname(name).toLowerCase()];
}

/** The line that shows the workspace file `path` (`inbox/...`) to the model as an image. */
export function imageMarker(path: string): string {
  return `[attached image: ${path}]`;
}

interface ImageContent {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
}

/** The image blocks for the markers in `text`, read from `cwd`. */
export function attachedImages(text: string, cwd: string): ImageContent[] {
  if (!text.includes("[attached image: ")) return [];
  const images: ImageContent[] = [];
  let total = 0;
  for (const match of text.matchAll(MARKER)) {
    const path = match[1] as string;
    const mediaType = imageMediaType(path);
    if (mediaType === undefined) continue;
    try {
      const file = join(cwd, path);
      const stat = lstatSync(file);
      if (!stat.isFile() || stat.size > MAX_IMAGE_BYTES || total + stat.size > MAX_IMAGES_BYTES) {
        continue;
      }
      total += stat.size;
      const data = readFileSync(file).toString("base64");
      images.push({ type: "image", source: { type: "base64", media_type: mediaType, data } });
    } catch {
      // Gone or unreadable: the marker stays as text, naming where it was.
    }
  }
  return images;
}

/**
 * A stream-json line as written to the agent: a `user` line whose text has image markers gets
 * the images as content blocks after its text; every other line is returned as it is.
 */
export function withAttachedImages(value: unknown, cwd: string): unknown {
  if (typeof value !== "object" || value === null) return value;
  const line = value as Record<string, unknown>;
  const message = line.message as { role?: unknown; content?: unknown } | undefined;
  if (line.type !== "user" || typeof message?.content !== "string") return value;
  const images = attachedImages(message.content, cwd);
  if (images.length === 0) return value;
  return {
    ...line,
    message: { ...message, content: [{ type: "text", text: message.content }, ...images] },
  };
}
