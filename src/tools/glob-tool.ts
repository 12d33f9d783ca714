import { isAbsolute, relative, resolve } from "node:path";
import * as v from "valibot";
import { type CompiledGlob, compileGlob, expandCrossSegmentBraces } from "./glob-pattern.js";
import { walkGlob } from "./glob-walk.js";
import { toolJsonSchema } from "./json-schema.js";
import type { Tool, ToolResult } from "./types.js";
import { resolveInWorkspace } from "./workspace-path.js";

export const MAX_GLOB_LINES = 200;

const globInput = v.object({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.description('Glob pattern relative to the workspace, e.g. "src/**/*.ts" or "*.{json,md}".'),
  ),
});

export type GlobInput = v.InferOutput<typeof globInput>;

const description = [
  "Find files in the workspace by name pattern. Returns matching file paths relative to the workspace, sorted, one per line.",
  "",
  "- `**` matches any number of directories, `*` any characters within a name, `?` one character,",
  "  `[abc]` / `[!abc]` one of (or none of) the listed characters, `{a,b}` either alternative.",
  "- Dotfiles are included; `.git` is skipped; symbolic links to directories are not followed.",
  `- At most ${MAX_GLOB_LINES} paths are listed, then a line says how many more were omitted; narrow the pattern if so.`,
  "- Only files are listed, not directories. The pattern cannot reach outside the workspace.",
].join("\n");

export function createGlobTool(): Tool<GlobInput> {
  return {
    name: "glob",
    description,
    inputSchema: globInput,
    get jsonSchema() {
      return toolJsonSchema(globInput);
    },
    async execute(input, context): Promise<ToolResult> {
      const started = performance.now();
      const found = await findFiles(
        context.workspace,
        input.pattern,
        context.signal,
        MAX_GLOB_LINES,
      );
      if (!found.ok) return { content: found.error, isError: true };
      return {
        content: formatPaths(found.paths, found.total),
        isError: false,
        details: {
          tool: "glob",
          filenames: found.paths,
          total: found.total,
          durationMs: Math.round(performance.now() - started),
        },
      };
    },
  };
}

export type GlobResult =
  | { ok: true; paths: string[]; total: number }
  | { ok: false; error: string };

/**
 * The first `limit` (in sorted order) of the unique POSIX paths of the files
 * matching `pattern`, relative to the workspace, and how many match in all.
 */
export async function findFiles(
  workspace: string,
  pattern: string,
  signal: AbortSignal,
  limit = Number.POSITIVE_INFINITY,
): Promise<GlobResult> {
  const groups = new Map<string, CompiledGlob[]>();
  for (const expanded of expandCrossSegmentBraces(pattern)) {
    const normalized = normalizePattern(workspace, expanded);
    if (!normalized.ok) return normalized;
    const compiled = compileGlob(normalized.pattern);
    const group = groups.get(compiled.base);
    if (group) group.push(compiled);
    else groups.set(compiled.base, [compiled]);
  }
  let found: string[] = [];
  try {
    for (const [base, globs] of groups) {
      const root = resolveInWorkspace(workspace, base === "" ? "." : base);
      if (!root.ok) return { ok: false, error: root.error };
      const prefix = base === "" ? "" : `${base}/`;
      found = await walkGlob(root.path, prefix, globs, signal, found);
    }
  } catch {
    return { ok: false, error: "The search was cancelled." };
  }
  if (groups.size > 1) found = [...new Set(found)];
  return { ok: true, paths: smallestSorted(found, limit), total: found.length };
}

/**
 * The `limit` smallest strings in code-unit order, sorted: a full sort when
 * most are wanted, else one pass keeping a sorted buffer (most paths are
 * rejected by a single comparison with the buffer's largest).
 */
function smallestSorted(items: string[], limit: number): string[] {
  if (items.length <= limit * 4) return items.sort().slice(0, limit);
  const buffer = items.slice(0, limit).sort();
  let largest = buffer[limit - 1]!;
  for (let index = limit; index < items.length; index += 1) {
    const item = items[index]!;
    if (item >= largest) continue;
    let low = 0;
    let high = limit - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (buffer[middle]! < item) low = middle + 1;
      else high = middle;
    }
    buffer.splice(low, 0, item);
    buffer.pop();
    largest = buffer[limit - 1]!;
  }
  return buffer;
}

/** The listing the model sees: `paths` (already capped) and a line for the `total - shown` omitted. */
export function formatPaths(paths: string[], total = paths.length): string {
  if (paths.length === 0) return "(no matches)";
  const shown = paths.slice(0, MAX_GLOB_LINES).join("\n");
  const omitted = total - Math.min(paths.length, MAX_GLOB_LINES);
  return omitted > 0 ? `${shown}\n... ${omitted} more paths omitted` : shown;
}

type Normalized = { ok: true; pattern: string } | { ok: false; error: string };

/** A relative pattern without `..`; absolute patterns must point inside the workspace. */
function normalizePattern(workspace: string, pattern: string): Normalized {
  let relativePattern = pattern;
  if (isAbsolute(pattern)) {
    const inside = relative(resolve(workspace), pattern);
    if (inside.startsWith("..") || isAbsolute(inside)) {
      return { ok: false, error: outside(pattern, workspace) };
    }
    relativePattern = inside === "" ? "**" : inside;
  }
  const parts = relativePattern.split("/");
  if (parts.includes("..")) return { ok: false, error: outside(pattern, workspace) };
  const kept = parts.filter((part) => part !== "" && part !== ".");
  if (kept.length === 0) return { ok: false, error: `The pattern ${pattern} names no files.` };
  // `dir/` asks for what is in the directory.
  if (relativePattern.endsWith("/")) kept.push("**");
  return { ok: true, pattern: kept.join("/") };
}

function outside(pattern: string, workspace: string): string {
  return `The pattern ${pattern} reaches outside the workspace ${workspace}; glob only searches inside it.`;
}
