import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const EXTENSIONS: Record<string, string> = {
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/ogg": "ogg",
  "audio/webm": "webm",
  "audio/flac": "flac",
  "image/svg+xml": "svg",
  "image/bmp": "bmp",
  "image/tiff": "tiff",
};

/**
 * Writes base64 media the model cannot be shown as a block (audio, an image type or size the
 * API refuses) to a file under `directory`, so it can be read by a tool; returns its path, or
 * undefined when it could not be written.
 */
export function saveMediaFile(
  directory: string,
  base64: string,
  mimeType: string,
): string | undefined {
  const extension = EXTENSIONS[mimeType] ?? "bin";
  try {
    mkdirSync(directory, { recursive: true });
    const path = join(directory, `${randomUUID()}.${extension}`);
    writeFileSync(path, Buffer.from(base64, "base64"));
    return path;
  } catch {
    return undefined;
  }
}
