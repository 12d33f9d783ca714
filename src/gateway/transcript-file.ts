import { mkdir, open, rename, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import type { TranscriptChunk } from "./store/transcript-chunks.js";

/** The size of the file, or -1 when there is none. */
export async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return -1;
    throw error;
  }
}

/** Bytes `[start, end)` of the file (fewer when it is shorter). */
export async function readRange(path: string, start: number, end: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(Math.max(0, end - start));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(
        buffer,
        filled,
        buffer.length - filled,
        start + filled,
      );
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** `bytes` up to and including its last newline: whole lines only (a line may be half written). */
export function wholeLines(bytes: Buffer): Buffer {
  return bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1);
}

/**
 * The file the stored chunks make, or why they make none: a gap or an overlap between chunks,
 * or a line that is not a JSON object (a session file is JSON lines, whichever engine wrote it).
 */
export function assemble(chunks: readonly TranscriptChunk[]): Buffer | { problem: string } {
  let end = 0;
  for (const chunk of chunks) {
    if (chunk.offset > end) return { problem: `the chunk at byte ${end} is missing` };
    if (chunk.offset < end) return { problem: `two chunks overlap at byte ${chunk.offset}` };
    end += chunk.bytes.length;
  }
  const bytes = Buffer.concat(chunks.map((chunk) => chunk.bytes));
  let start = 0;
  for (let line = 1; start < bytes.length; line++) {
    const newline = bytes.indexOf(0x0a, start);
    const stop = newline === -1 ? bytes.length : newline;
    const text = bytes.subarray(start, stop).toString("utf8");
    if (text.trim() !== "" && !isJsonObject(text)) {
      return { problem: `line ${line} (at byte ${start}) is not a JSON object` };
    }
    start = stop + 1;
  }
  return bytes;
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Writes the file whole or not at all (a temporary file renamed over it), folders made. */
export async function writeWhole(path: string, bytes: Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.restoring-${process.pid}`;
  try {
    const handle = await open(temporary, "w", 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}
