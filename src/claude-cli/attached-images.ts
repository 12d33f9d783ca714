/**
 * Images a person sent, shown to the model. The gateway saves an image into the workspace's
 * `inbox/` and stores it with the message (its path and type, never a line in the text); as
 * the message is written to the agent (either engine), each image's file is read from the
 * agent's folder and added after the message's text as a line naming it and an image block.
 * What a person types is only ever text: no line of it attaches a file. An image whose file
 * is gone, too big, a symbolic link, leads out of the folder or is not an image is named but
 * not shown.
 */
import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { extname, isAbsolute, join, sep } from "node:path";

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

/** An image a message carries: a file of the agent's folder (`inbox/photo.jpg`) and its type. */
export interface AttachedImage {
  path: string;
  mediaType: string;
}

/** A content block of a stream-json user message: its text, or an image. */
export type UserContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; source: { type: "base64"; media_type: string; data: string } };

/** The media type the model takes for an image file name, or undefined if it takes none. */
export function imageMediaType(name: string): string | undefined {
  return MEDIA_TYPES[extname(name).toLowerCase()];
}

/** The file's bytes when it may be shown: a plain file inside `cwd`, at most `room` bytes. */
function readInside(cwd: string, path: string, room: number): Buffer | undefined {
  if (isAbsolute(path) || path.split(/[\\/]/).includes("..")) return undefined;
  try {
    const file = join(cwd, path);
    const stat = lstatSync(file);
    if (!stat.isFile() || stat.size > Math.min(MAX_IMAGE_BYTES, room)) return undefined;
    // A folder on the way replaced by a link out of the workspace shows nothing from there.
    if (!realpathSync(file).startsWith(`${realpathSync(cwd)}${sep}`)) return undefined;
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * The blocks that show `images` to the model, read from `cwd` now: for each, a text line
 * naming it (`[attached image: inbox/x.png]`), then its image block when it may be shown.
 */
export function imageBlocks(
  images: readonly AttachedImage[] | undefined,
  cwd: string | undefined,
): UserContentBlock[] {
  const blocks: UserContentBlock[] = [];
  let total = 0;
  for (const image of images ?? []) {
    blocks.push({ type: "text", text: `[attached image: ${image.path}]` });
    const mediaType = Object.values(MEDIA_TYPES).includes(image.mediaType)
      ? image.mediaType
      : imageMediaType(image.path);
    if (mediaType === undefined) continue;
    const data = readInside(cwd ?? process.cwd(), image.path, MAX_IMAGES_BYTES - total);
    if (data === undefined) continue;
    total += data.length;
    blocks.push({
      type: "image",
      source: { type: "base64", media_type: mediaType, data: data.toString("base64") },
    });
  }
  return blocks;
}
