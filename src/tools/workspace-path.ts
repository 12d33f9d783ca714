import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import * as v from "valibot";

/** The `path` input of the file tools, as the model is shown it. */
export const filePathInput = v.pipe(
  v.string(),
  v.minLength(1),
  v.description("Path of the file, relative to the workspace (or absolute inside it)."),
);

export type WorkspacePath = { ok: true; path: string } | { ok: false; error: string };

/** Links followed while resolving one path, as the kernel's own ELOOP limit. */
const MAX_LINK_HOPS = 40;

/**
 * Resolves `userPath` (relative to the workspace, or absolute) to a real path
 * inside the workspace. Refuses `..` escapes and symlinks anywhere along the
 * way (the file itself, a parent directory, or a dangling link) whose target
 * lies outside the workspace's real path. For a path that does not exist yet,
 * the nearest existing ancestor decides. The returned path is the real one, so
 * the caller touches exactly what was checked.
 */
export function resolveInWorkspace(workspace: string, userPath: string): WorkspacePath {
  if (userPath.length === 0) return { ok: false, error: "The path is empty." };
  if (userPath.includes("\0")) return { ok: false, error: "The path contains a NUL byte." };
  let workspaceReal: string;
  try {
    workspaceReal = realpathSync(workspace);
  } catch {
    return { ok: false, error: `The workspace ${workspace} does not exist.` };
  }
  const lexical = resolve(workspace, userPath);
  if (!isInside(lexical, resolve(workspace)) && !isInside(lexical, workspaceReal)) {
    return { ok: false, error: outsideError(userPath, workspace) };
  }
  const real = realResolve(lexical);
  if (real === undefined) {
    return { ok: false, error: `Too many levels of symbolic links in ${userPath}.` };
  }
  if (!isInside(real, workspaceReal)) {
    return {
      ok: false,
      error: `${outsideError(userPath, workspace)} (it leads to ${real} through a symbolic link)`,
    };
  }
  return { ok: true, path: real };
}

/**
 * The real path of `userPath` relative to the workspace's real path (POSIX
 * separators), or undefined when it cannot be resolved inside.
 */
export function realWorkspacePath(workspace: string, userPath: string): string | undefined {
  const resolved = resolveInWorkspace(workspace, userPath);
  if (!resolved.ok) return undefined;
  try {
    return relative(realpathSync(workspace), resolved.path).split(sep).join("/") || ".";
  } catch {
    return undefined;
  }
}

function outsideError(userPath: string, workspace: string): string {
  return `The path ${userPath} is outside the workspace ${workspace}; file tools only work inside it.`;
}

export function isInside(path: string, directory: string): boolean {
  const fromDirectory = relative(directory, path);
  return (
    fromDirectory === "" ||
    (!fromDirectory.startsWith(`..${sep}`) && fromDirectory !== ".." && !isAbsolute(fromDirectory))
  );
}

/**
 * The real path of `path`, where a missing tail is kept as written and
 * dangling links are followed by hand. Undefined on a link loop.
 */
function realResolve(path: string): string | undefined {
  let current = path;
  const missing: string[] = [];
  for (let hops = 0; hops <= MAX_LINK_HOPS; ) {
    try {
      return join(realpathSync(current), ...missing.reverse());
    } catch (error) {
      if (errorCode(error) === "ELOOP") return undefined;
    }
    const link = linkTarget(current);
    if (link !== undefined) {
      current = resolve(dirname(current), link);
      hops += 1;
      continue;
    }
    const parent = dirname(current);
    if (parent === current) return join(current, ...missing.reverse());
    missing.push(basename(current));
    current = parent;
  }
  return undefined;
}

function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
