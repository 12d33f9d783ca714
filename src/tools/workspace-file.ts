import { constants, existsSync, realpathSync } from "node:fs";
import { type FileHandle, mkdir, open, readlink, unlink } from "node:fs/promises";
import { dirname, isAbsolute, relative, sep } from "node:path";
import type { ToolContext } from "./types.js";
import { isInside, resolveInWorkspace } from "./workspace-path.js";

export type OpenedFile =
  | { ok: true; handle: FileHandle; size: number; created: boolean; path: string }
  | { ok: false; error: string };

/**
 * `read`: an existing file; `update`: an existing file, read then rewritten; `write`: created
 * if missing (an existing one can be read first, for what it held).
 */
export type OpenMode = "read" | "update" | "write";

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
/** Linux names each open descriptor here; a path through one is looked up from that very folder. */
const DESCRIPTORS = "/proc/self/fd";
let descriptorPaths: boolean | undefined;
const FLAGS: Record<OpenMode, number> = { read: O_RDONLY, update: O_RDWR, write: O_RDWR };

/**
 * Opens a file of the workspace so that what is read or written is the file
 * that was checked, by any path:
 * - the path is resolved (`..`, symbolic links along the way) and must stay in
 *   the workspace's real path (`resolveInWorkspace`), or it is `judged`: the
 *   real path the permission gate judged, opened as it is;
 * - on Linux that real path is opened one folder at a time from the
 *   workspace's own descriptor (`/proc/self/fd/N/name`, as `openat` would),
 *   each with `O_NOFOLLOW`: a folder swapped for a link after the check (a
 *   background command flipping `d -> sub/` and `d -> .rudder/`) fails the
 *   open instead of leading elsewhere; missing folders are made the same way;
 * - the file is opened with `O_NOFOLLOW` (a link swapped in after the check is not
 *   followed) and `O_NONBLOCK` (a FIFO cannot hang the tool), a new file with
 *   `O_EXCL`;
 * - the opened descriptor must be a regular file with one link: another hard
 *   link may be a name outside the workspace (a `~/.ssh` key, `~/.bashrc`),
 *   and no cheap check can tell where, so such a file is neither read nor
 *   written;
 * - on Linux, the descriptor's own path (`/proc/self/fd/N`) must be the real
 *   path judged, which catches a folder renamed meanwhile; nothing has been
 *   written then, and a file just created is removed.
 * The caller closes the handle.
 */
export async function openWorkspaceFile(
  workspace: string,
  userPath: string,
  mode: OpenMode,
  judged?: string,
): Promise<OpenedFile> {
  const resolved = judgedPath(workspace, userPath, judged);
  if (!resolved.ok) return resolved;
  descriptorPaths ??= existsSync(`${DESCRIPTORS}/0`) || existsSync(DESCRIPTORS);
  if (descriptorPaths) return openBeneath(workspace, userPath, resolved.path, mode);
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

/**
 * The file a file tool's call names, opened as `openWorkspaceFile` opens it: beneath the
 * call's workspace, following no link, and exactly the path the permission gate judged
 * (`context.judgedPath`) when it judged one. The caller closes the handle.
 */
export function openToolFile(
  context: Pick<ToolContext, "workspace" | "judgedPath">,
  path: string,
  mode: OpenMode,
): Promise<OpenedFile> {
  return openWorkspaceFile(context.workspace, path, mode, context.judgedPath);
}

/** The real path to open: the gate's (still inside the workspace), or resolved now. */
function judgedPath(
  workspace: string,
  userPath: string,
  judged: string | undefined,
): { ok: true; path: string } | { ok: false; error: string } {
  if (judged === undefined) return resolveInWorkspace(workspace, userPath);
  if (!isAbsolute(judged) || !isInside(judged, realpathSync(workspace))) {
    return { ok: false, error: `${userPath} is outside the workspace ${workspace}.` };
  }
  return { ok: true, path: judged };
}

/**
 * Opens `real` (a real path in the workspace) one component at a time from the workspace's
 * descriptor, following no link on the way (see `openWorkspaceFile`).
 */
async function openBeneath(
  workspace: string,
  userPath: string,
  real: string,
  mode: OpenMode,
): Promise<OpenedFile> {
  const workspaceReal = realpathSync(workspace);
  const names = relative(workspaceReal, real).split(sep);
  const last = names.pop();
  if (last === undefined || last === "") {
    return { ok: false, error: `${userPath} is a directory, not a file; use glob to list it.` };
  }
  let folder: FileHandle;
  try {
    folder = await open(workspaceReal, O_RDONLY | O_DIRECTORY);
  } catch (error) {
    return { ok: false, error: describe(userPath, error) };
  }
  let handle: FileHandle;
  let created = false;
  try {
    for (const name of names) {
      const beneath = `${DESCRIPTORS}/${folder.fd}/${name}`;
      const next = await open(beneath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch(
        async (error: NodeJS.ErrnoException) => {
          if (error.code !== "ENOENT" || mode !== "write") throw error;
          await mkdir(beneath).catch((inner: NodeJS.ErrnoException) => {
            if (inner.code !== "EEXIST") throw inner;
          });
          return open(beneath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        },
      );
      await folder.close();
      folder = next;
    }
    const file = `${DESCRIPTORS}/${folder.fd}/${last}`;
    try {
      handle = await open(file, FLAGS[mode] | O_NOFOLLOW | O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || mode !== "write") throw error;
      handle = await open(file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
      created = true;
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const swapped = code === "ELOOP" || code === "ENOTDIR";
    return {
      ok: false,
      error: swapped
        ? `${userPath} changed while it was opened (a folder on its way became a link or a file); nothing was read or written.`
        : describe(userPath, error),
    };
  } finally {
    await folder.close().catch(() => undefined);
  }
  const refused = await refusal(handle, workspace, userPath, created, real);
  if (refused !== undefined) {
    await handle.close();
    return { ok: false, error: refused };
  }
  const info = await handle.stat();
  return { ok: true, handle, size: info.size, created, path: real };
}

async function refusal(
  handle: FileHandle,
  workspace: string,
  userPath: string,
  created: boolean,
  expected?: string,
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
  if (opened !== undefined && expected !== undefined && opened !== expected) {
    if (created) await unlink(opened).catch(() => undefined);
    return `${userPath} changed while it was opened (it became ${opened}); nothing was read or written.`;
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
