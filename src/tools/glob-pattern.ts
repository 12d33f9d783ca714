/**
 * Glob patterns compiled to regular expressions: `**` (any number of
 * directories), `*`, `?`, `[...]` / `[!...]` classes and `{a,b}`
 * alternatives, matched against POSIX paths relative to a walk's base.
 * Dotfiles match like any other name.
 */

/** One path segment of a pattern: `**`, or a matcher for a single name. */
export type Segment = { globstar: true } | { globstar: false; matcher: RegExp };

export interface CompiledGlob {
  /** Leading literal directories, POSIX, relative to the workspace ("" for its root). */
  base: string;
  /** The rest of the pattern, one entry per path segment (never empty). */
  segments: Segment[];
  /** The whole rest, for paths relative to `base`. */
  regex: RegExp;
  /**
   * Set when the rest is `<literal segments>/**\/<name>`: once past the `**`, a
   * file matches exactly when its name does, so no path needs building.
   */
  nameAfterGlobstar: RegExp | undefined;
  /** Set when the rest ends in its only `**`: once past it, every file matches. */
  anythingAfterGlobstar: boolean;
}

const MAX_EXPANSIONS = 1024;

/**
 * Splits a pattern on `/` into expanded alternatives where a `{...}` group
 * spans directories (`{src,test}/x` stays one pattern, `{a/b,c}` becomes two).
 */
export function expandCrossSegmentBraces(pattern: string): string[] {
  const group = findBraceGroup(pattern, (inner) => inner.includes("/"));
  if (group === undefined) return [pattern];
  const before = pattern.slice(0, group.start);
  const after = pattern.slice(group.end + 1);
  const results: string[] = [];
  for (const alternative of group.alternatives) {
    for (const expanded of expandCrossSegmentBraces(before + alternative + after)) {
      results.push(expanded);
      if (results.length >= MAX_EXPANSIONS) return results;
    }
  }
  return results;
}

/** Compiles a pattern that is already relative, normalised and free of `..`. */
export function compileGlob(pattern: string): CompiledGlob {
  const parts = pattern.split("/").filter((part) => part.length > 0 && part !== ".");
  let literalCount = 0;
  while (literalCount < parts.length - 1 && !hasMagic(parts[literalCount]!)) literalCount += 1;
  const base = parts.slice(0, literalCount).map(removeEscapes).join("/");
  const rest = parts.slice(literalCount);
  const segments: Segment[] = rest.map((part) =>
    part === "**"
      ? { globstar: true }
      : { globstar: false, matcher: new RegExp(`^${segmentSource(part)}$`) },
  );
  const globstars = segments.filter((segment) => segment.globstar).length;
  const firstGlobstar = segments.findIndex((segment) => segment.globstar);
  const last = segments[segments.length - 1]!;
  return {
    base,
    segments,
    regex: new RegExp(`^${pathSource(segments)}$`),
    nameAfterGlobstar:
      globstars === 1 && firstGlobstar === segments.length - 2 && !last.globstar
        ? last.matcher
        : undefined,
    anythingAfterGlobstar: globstars === 1 && last.globstar,
  };
}

export function hasMagic(part: string): boolean {
  return /[*?[{\\]/.test(part);
}

function pathSource(segments: Segment[]): string {
  let source = "";
  segments.forEach((segment, index) => {
    const isLast = index === segments.length - 1;
    if (segment.globstar) {
      source += isLast ? ".+" : "(?:[^/]+/)*";
    } else {
      source += segment.matcher.source.slice(1, -1) + (isLast ? "" : "/");
    }
  });
  return source;
}

/** A regular expression source for one path segment (no `/` inside). */
function segmentSource(part: string): string {
  let source = "";
  for (let index = 0; index < part.length; index += 1) {
    const char = part[index]!;
    if (char === "\\" && index + 1 < part.length) {
      index += 1;
      source += escapeRegex(part[index]!);
    } else if (char === "*") {
      while (part[index + 1] === "*") index += 1;
      source += "[^/]*";
    } else if (char === "?") {
      source += "[^/]";
    } else if (char === "[") {
      const parsed = characterClass(part, index);
      if (parsed === undefined) {
        source += "\\[";
      } else {
        source += parsed.source;
        index = parsed.end;
      }
    } else if (char === "{") {
      const group = findBraceGroup(part.slice(index), () => true);
      if (group === undefined || group.start !== 0) {
        source += "\\{";
      } else {
        source += `(?:${group.alternatives.map(segmentSource).join("|")})`;
        index += group.end;
      }
    } else {
      source += escapeRegex(char);
    }
  }
  return source;
}

/** `[...]` starting at `start`: its source and the index of its closing `]`. */
function characterClass(part: string, start: number): { source: string; end: number } | undefined {
  let index = start + 1;
  let negated = false;
  if (part[index] === "!" || part[index] === "^") {
    negated = true;
    index += 1;
  }
  let body = "";
  for (let first = true; index < part.length; index += 1, first = false) {
    const char = part[index]!;
    if (char === "]" && !first) {
      return { source: negated ? `[^/${body}]` : `[${body}]`, end: index };
    }
    if (char === "\\" && index + 1 < part.length) {
      index += 1;
      body += `\\${part[index]}`;
    } else {
      body += /[\]\\^[]/.test(char) ? `\\${char}` : char;
    }
  }
  return undefined;
}

interface BraceGroup {
  start: number;
  end: number;
  alternatives: string[];
}

/**
 * The first `{...}` group with at least one top-level comma whose inner text
 * passes `accept`; `{x}` without a comma is literal text.
 */
function findBraceGroup(text: string, accept: (inner: string) => boolean): BraceGroup | undefined {
  for (let start = 0; start < text.length; start += 1) {
    const char = text[start];
    if (char === "\\") {
      start += 1;
      continue;
    }
    if (char !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    for (let index = start; index < text.length; index += 1) {
      const inner = text[index];
      if (inner === "\\") {
        index += 1;
      } else if (inner === "{") {
        depth += 1;
      } else if (inner === "}") {
        depth -= 1;
        if (depth === 0) {
          const body = text.slice(start + 1, index);
          if (commas.length > 0 && accept(body)) {
            const cuts = [start, ...commas, index];
            const alternatives = cuts.slice(1).map((cut, at) => text.slice(cuts[at]! + 1, cut));
            return { start, end: index, alternatives };
          }
          break;
        }
      } else if (inner === "," && depth === 1) {
        commas.push(index);
      }
    }
  }
  return undefined;
}

function removeEscapes(part: string): string {
  return part.replace(/\\(.)/g, "$1");
}

function escapeRegex(char: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(char) ? `\\${char}` : char;
}
