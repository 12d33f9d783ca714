import { mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, relative, sep } from "node:path";
import { SESSION_FILE, type TranscriptChunk } from "../store/transcript-chunks.js";

/** A file `writeWhole` is writing: never stored, never listed as a side file. */
const RESTORING = ".restoring-";

/**
 * A file Claude Code is writing to rename over another (`<name>.tmp.<hex>`,
 * `<name>.tmp.<pid>.<hex>`, as its subagents' `.meta.json`): gone a moment later, so a save
 * that lists it mid-write must not store it as a side file of its own.
 */
const WRITING = /\.tmp\.[0-9a-f]+(\.[0-9a-f]+)*$/i;

/** Whether a side file's name is one of a file still being written (never stored nor restored). */
export function isBeingWritten(file: string): boolean {
  return file.includes(RESTORING) || WRITING.test(file);
}

/** The size of the file, or -1 when there is none. */
export async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return -1;
    throw error;
  }
}

/** The size and modification time of the file, as one string; undefined when there is none. */
export async function fileStamp(path: string): Promise<string | undefined> {
  try {
    const { size, mtimeMs } = await stat(path);
    return `${size}@${mtimeMs}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * The folder beside a session's file where its engine keeps the session's other files (Claude
 * Code: `<session>/subagents/agent-<id>.jsonl` and `.meta.json`, `<session>/tool-results/...`).
 */
export function sideFolderOf(sessionFile: string): string {
  return sessionFile.endsWith(".jsonl")
    ? sessionFile.slice(0, -".jsonl".length)
    : `${sessionFile}.d`;
}

/** The files under `folder` (at any depth) as `/`-separated relative paths, sorted; [] when none. */
export async function sideFiles(folder: string): Promise<string[]> {
  let entries: Array<{ name: string; parentPath?: string; path?: string; isFile(): boolean }>;
  try {
    entries = await readdir(folder, { recursive: true, withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile() && !isBeingWritten(entry.name))
    .map((entry) =>
      relative(folder, join(entry.parentPath ?? entry.path ?? folder, entry.name))
        .split(sep)
        .join("/"),
    )
    .sort();
}

/**
 * Whether a stored side file's name is a path inside the side folder (relative, normalized, no
 * `..`), so that a restore never writes outside it whatever the store holds.
 */
export function isInsideFolder(file: string): boolean {
  return (
    file !== SESSION_FILE &&
    !isAbsolute(file) &&
    normalize(file) === file &&
    !file.split("/").includes("..") &&
    !file.includes(RESTORING)
  );
}

/**
 * Whether the file is JSON lines, appended to a line at a time (a session file, a subagent's
 * `.jsonl`): stored in whole lines as it grows. Any other side file is stored whole when it
 * changes.
 */
export function isJsonLines(file: string): boolean {
  return file === SESSION_FILE || file.endsWith(".jsonl");
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
 * or, for JSON lines (a session file, whichever engine wrote it), a line that is not a JSON
 * object.
 */
export function assemble(
  chunks: readonly TranscriptChunk[],
  jsonLines = true,
): Buffer | { problem: string } {
  let end = 0;
  for (const chunk of chunks) {
    if (chunk.offset > end) return { problem: `the chunk at byte ${end} is missing` };
    if (chunk.offset < end) return { problem: `two chunks overlap at byte ${chunk.offset}` };
    end += chunk.bytes.length;
  }
  const bytes = Buffer.concat(chunks.map((chunk) => chunk.bytes));
  if (!jsonLines) return bytes;
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
  const temporary = `${path}${RESTORING}${process.pid}`;
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
