/** One hunk of a line diff, as Claude Code's `structuredPatch` lists them (`-old`, `+new`, ` kept`). */
export interface PatchHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

const CONTEXT_LINES = 3;

function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * The change from `before` to `after` as one hunk around the lines that differ (the common
 * leading and trailing lines stay out, but for up to three of context each side); no hunk
 * when nothing changed. Not a minimal diff: a change at both ends of a file is one hunk.
 */
export function structuredPatch(before: string, after: string): PatchHunk[] {
  const old = linesOf(before);
  const updated = linesOf(after);
  let head = 0;
  while (head < old.length && head < updated.length && old[head] === updated[head]) head += 1;
  let tail = 0;
  while (
    tail < old.length - head &&
    tail < updated.length - head &&
    old[old.length - 1 - tail] === updated[updated.length - 1 - tail]
  ) {
    tail += 1;
  }
  if (head === old.length && head === updated.length) return [];
  const leading = Math.min(head, CONTEXT_LINES);
  const trailing = Math.min(tail, CONTEXT_LINES);
  const start = head - leading;
  const oldEnd = old.length - tail;
  const newEnd = updated.length - tail;
  const lines = [
    ...old.slice(start, head).map((line) => ` ${line}`),
    ...old.slice(head, oldEnd).map((line) => `-${line}`),
    ...updated.slice(head, newEnd).map((line) => `+${line}`),
    ...old.slice(oldEnd, oldEnd + trailing).map((line) => ` ${line}`),
  ];
  const oldLines = oldEnd - start + trailing;
  const newLines = newEnd - start + trailing;
  return [
    {
      oldStart: oldLines === 0 ? start : start + 1,
      oldLines,
      newStart: newLines === 0 ? start : start + 1,
      newLines,
      lines,
    },
  ];
}
