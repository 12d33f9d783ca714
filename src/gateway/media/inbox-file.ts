/**
 * Saving a file someone sent into a channel's workspace: under `inbox/`, its name sanitised,
 * never overwriting (a taken name gets `-1`, `-2`, ... before its extension), never outside the
 * workspace (an `inbox` that is a symlink or leads elsewhere is refused).
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, realpath } from "node:fs/promises";
import { extname, join, sep } from "node:path";

/** The folder, inside the workspace, where files people send are saved. */
export const INBOX_FOLDER = "inbox";

const NAME_LIMIT = 80;

/** A file name safe on every system and in a marker line: letters, digits, `.`, `_`, `-`. */
export function sanitiseFileName(name: string | undefined, fallback: string): string {
  const base = (name ?? "").split(/[\\/]/).pop() ?? "";
  const cleaned = base
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[.-]+/, "")
    .replace(/[.-]+$/, "");
  const chosen = cleaned === "" ? fallback : cleaned;
  if (chosen.length <= NAME_LIMIT) return chosen;
  const extension = extname(chosen).slice(0, 12);
  return `${chosen.slice(0, NAME_LIMIT - extension.length)}${extension}`;
}

/** Thrown when the inbox cannot be used; the message says why, in one line. */
export class InboxError extends Error {}

async function inboxFolder(workspace: string): Promise<string> {
  const folder = join(workspace, INBOX_FOLDER);
  // Made only where nothing is: a file or a link (dangling or not) there is refused below.
  const found = await lstat(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (found === undefined) {
    await mkdir(folder, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
  }
  const stat = found ?? (await lstat(folder));
  if (!stat.isDirectory())
    throw new InboxError(`${INBOX_FOLDER}/ in the workspace is not a folder`);
  const [root, real] = await Promise.all([realpath(workspace), realpath(folder)]);
  if (real !== join(root, INBOX_FOLDER) && !real.startsWith(`${root}${sep}`)) {
    throw new InboxError(`${INBOX_FOLDER}/ leads outside the workspace`);
  }
  return folder;
}

/**
 * Writes `data` as a new file in the workspace's inbox; resolves to its path relative to the
 * workspace (`inbox/report.pdf`, or `inbox/report-1.pdf` when that name is taken).
 */
export async function saveInboxFile(
  workspace: string,
  name: string,
  data: Buffer,
): Promise<string> {
  const folder = await inboxFolder(workspace);
  const extension = extname(name);
  const stem = name.slice(0, name.length - extension.length);
  for (let attempt = 0; attempt < 1000; attempt++) {
    const candidate = attempt === 0 ? name : `${stem}-${attempt}${extension}`;
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      // O_EXCL and O_NOFOLLOW: a name taken (or planted as a symlink) is never written through.
      handle = await open(
        join(folder, candidate),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    try {
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
    return `${INBOX_FOLDER}/${candidate}`;
  }
  throw new InboxError(`no free name for ${name} in ${INBOX_FOLDER}/`);
}
