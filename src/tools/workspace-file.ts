import { constants, realpathSync } from "node:fs";
import { type FileHandle, mkdir, open, readlink, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { isInside, resolveInWorkspace } from "./workspace-path.js";

export type OpenedFile =
  | { ok: true; handle: FileHandle; size: number; created: boolean; path: string }
  | { ok: false; error: string };

/**
 * `read`: an existing file; `update`: an existing file, read then rewritten; `write`: created
 * if missing (an existing one can be read first, for what it held).
 */
export type OpenMode = "read" | "update" | "write";

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;
const FLAGS: Record<OpenMode, number> = { read: O_RDONLY, update: O_RDWR, write: O_RDWR };

/**
 * Opens a file of the workspace so that what is read or written is the file
 * that was checked, by any path:
 * - the path is resolved (`..`, symbolic links along the way) and must stay in
 *   the workspace's real path (`resolveInWorkspace`);
 * - it is opened with `O_NOFOLLOW` (a link swapped in after the check is not
 *   followed) and `O_NONBLOCK` (a FIFO cannot hang the tool), a new file with
 *   `O_EXCL`;
 * - the opened descriptor must be a regular file with one link: another hard
 *   link may be a name outside the workspace (a `~/.ssh` key, `~/.bashrc`),
 *   and no cheap check can tell where, so such a file is neither read nor
 *   written;
 * - on Linux, the descriptor's own path (`/proc/self/fd/N`) must still be in
 *   the workspace, which catches a parent folder swapped for a link.
 * The caller closes the handle.
 */
export async function openWorkspaceFile(
  workspace: string,
  userPath: string,
  mode: OpenMode,
): Promise<OpenedFile> {
  const resolved = resolveInWorkspace(workspace, userPath);
  if (!resolved.ok) return resolved;
  let handle: FileHandle;
  let created = false;
  try {
    handle = await open(resolved.path, FLAGS[mode] | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && mode === "write") {
      try {
        await mkdir(dirname(resolved.path), { recursive: true });
        handle = await open(resolved.path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
        created = true;
      } catch (inner) {
        return { ok: false, error: describe(userPath, inner) };
      }
    } else {
      return { ok: false, error: describe(userPath, error) };
    }
  }
  const refused = await refusal(handle, workspace, userPath, created);
  if (refused !== undefined) {
    await handle.close();
    return { ok: false, error: refused };
  }
  const info = await handle.stat();
  return { ok: true, handle, size: info.size, created, path: resolved.path };
}

async function refusal(
  handle: FileHandle,
  workspace: string,
  userPath: string,
  created: boolean,
): Promise<string | undefined> {
  const info = await handle.stat();
  if (info.isDirectory()) return `${userPath} is a directory, not a file; use glob to list it.`;
  if (!info.isFile()) return `${userPath} is not a regular file (a device, FIFO or socket).`;
  if (info.nlink > 1) {
    return `${userPath} has ${info.nlink} hard links, and another of them may be outside the workspace, so the file tools neither read nor write it.`;
  }
  const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (opened !== undefined && !isInside(opened, realpathSync(workspace))) {
    if (created) await unlink(opened).catch(() => undefined);
    return `${userPath} led outside the workspace while it was opened (to ${opened}); nothing was read or written there.`;
  }
  return undefined;
}

function describe(userPath: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return `${userPath} does not exist.`;
  if (code === "ELOOP")
    return `${userPath} is a symbolic link; the file tools do not follow it here.`;
  if (code === "EISDIR") return `${userPath} is a directory, not a file.`;
  if (code === "ENXIO") return `${userPath} is not a regular file (a device, FIFO or socket).`;
  const message = error instanceof Error ? error.message : String(error);
  return `Cannot open ${userPath}: ${message}`;
}
