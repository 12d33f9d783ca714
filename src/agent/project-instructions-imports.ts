/**
 * The `@path` imports of an instruction file, as Claude Code reads them: an `@` at the
 * start of a line or after whitespace, followed by a path (a backslash escapes a space).
 * Nothing inside a fenced code block (``` or ~~~) or an inline code span counts, so
 * examples in a CLAUDE.md do not pull files in. Returns the paths as written, in order,
 * each once.
 */
export function importPaths(text: string): string[] {
  const paths: string[] = [];
  let fence: { marker: string; length: number } | undefined;
  for (const line of text.split(/\r?\n/)) {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (
        opening?.[1] !== undefined &&
        opening[1][0] === fence.marker &&
        opening[1].length >= fence.length &&
        line.trim() === opening[1]
      ) {
        fence = undefined;
      }
      continue;
    }
    if (opening?.[1] !== undefined) {
      fence = { marker: opening[1][0] as string, length: opening[1].length };
      continue;
    }
    for (const match of withoutCodeSpans(line).matchAll(/(?:^|\s)@((?:[^\s\\]|\\ )+)/g)) {
      // A sentence's closing punctuation ("see @notes.md.") is not part of the path.
      const path = (match[1] as string).replaceAll("\\ ", " ").replace(/[.,;:!?)\]}'"]+$/, "");
      if (looksLikePath(path) && !paths.includes(path)) paths.push(path);
    }
  }
  return paths;
}

/** The line with every inline code span (a run of backticks up to the same run) blanked. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[\s\S]*?\1/g, " ");
}

/** Mentions such as `@` alone, `@@`, `@{...}` or `@#` are not paths. */
function looksLikePath(path: string): boolean {
  return /^[\w.~/-]/.test(path) && !path.startsWith("@");
}
