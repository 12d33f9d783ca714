/**
 * One shell word as bash reads it: quotes removed, `$'...'` decoded, `\`-escapes and line
 * continuations taken out, brace expansion done (`s{u,}do` is `sudo sdo`), and what is left
 * for run time kept as written (`$HOME`, `$(cmd)`) with a note of whether it could glob.
 */
import { readAnsiCQuoted } from "./ansi-c-quoting.js";
import type { SyntaxNode } from "./bash-parser.js";

/** A character of the word (`literal`: quoted or escaped, so not special) or an expansion. */
interface Atom {
  text: string;
  literal: boolean;
  expansion?: boolean;
}

export interface ExpandedWord {
  value: string;
  /** An unquoted `*`, `?` or `[` the shell would match against file names. */
  glob: boolean;
}

/** Thrown for a brace expansion that makes more words than the gate reads. */
export class TooManyWordsError extends Error {
  constructor() {
    super("a brace expansion makes too many words to check");
    this.name = "TooManyWordsError";
  }
}

const MAX_WORDS = 512;
const EXPANSIONS = new Set([
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "expansion",
  "simple_expansion",
]);

/**
 * The words a word node becomes. `onExpansion` is called for each outermost expansion in
 * it (in order), so the caller can judge what it runs and whether its value is known.
 */
export function expandWord(
  node: SyntaxNode,
  line: string,
  onExpansion: (expansion: SyntaxNode) => void,
): ExpandedWord[] {
  const atoms = wordAtoms(node, line, onExpansion);
  return braceExpand(atoms, { count: 0 }).map((word) => ({
    value: word.map((atom) => atom.text).join(""),
    glob: word.some((atom) => !atom.literal && !atom.expansion && /[*?[]/.test(atom.text)),
  }));
}

/** The outermost expansions inside a node, in order. */
export function outermostExpansions(node: SyntaxNode): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  const visit = (current: SyntaxNode): void => {
    for (const child of current.namedChildren) {
      if (child === null) continue;
      if (EXPANSIONS.has(child.type)) found.push(child);
      else visit(child);
    }
  };
  if (EXPANSIONS.has(node.type)) found.push(node);
  else visit(node);
  return found;
}

function wordAtoms(
  node: SyntaxNode,
  line: string,
  onExpansion: (expansion: SyntaxNode) => void,
): Atom[] {
  const expansions = outermostExpansions(node);
  const atoms: Atom[] = [];
  const end = node.endIndex;
  let index = node.startIndex;
  let quoted = false;
  let next = 0;
  while (index < end) {
    const expansion = expansions[next];
    if (expansion !== undefined && expansion.startIndex <= index) {
      next += 1;
      if (expansion.startIndex < index) continue;
      onExpansion(expansion);
      atoms.push({
        text: line.slice(expansion.startIndex, expansion.endIndex),
        literal: quoted,
        expansion: true,
      });
      index = expansion.endIndex;
      continue;
    }
    const char = line[index]!;
    if (char === "\\") {
      const escaped = line[index + 1] ?? "";
      if (escaped === "\n") index += 2;
      else if (!quoted || /[$`"\\]/.test(escaped)) {
        atoms.push({ text: escaped, literal: true });
        index += 2;
      } else {
        atoms.push({ text: char, literal: true });
        index += 1;
      }
    } else if (char === '"') {
      quoted = !quoted;
      index += 1;
    } else if (!quoted && char === "'") {
      const close = line.indexOf("'", index + 1);
      const stop = close === -1 || close > end ? end : close;
      for (const literal of line.slice(index + 1, stop))
        atoms.push({ text: literal, literal: true });
      index = stop + 1;
    } else if (!quoted && char === "$" && line[index + 1] === "'") {
      const decoded = readAnsiCQuoted(line, index);
      for (const literal of decoded.value) atoms.push({ text: literal, literal: true });
      index = decoded.end;
    } else if (!quoted && char === "$" && line[index + 1] === '"') {
      index += 1;
    } else {
      atoms.push({ text: char, literal: quoted });
      index += 1;
    }
  }
  return atoms;
}

const SEQUENCE = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/;

/** Bash's brace expansion over unquoted `{`, `,` and `}`; a word without one stays whole. */
function braceExpand(atoms: Atom[], budget: { count: number }): Atom[][] {
  const isChar = (atom: Atom | undefined, char: string): boolean =>
    atom !== undefined && !atom.literal && !atom.expansion && atom.text === char;
  for (let open = 0; open < atoms.length; open += 1) {
    if (!isChar(atoms[open], "{")) continue;
    let depth = 0;
    const commas: number[] = [];
    let close = -1;
    for (let index = open; index < atoms.length; index += 1) {
      if (isChar(atoms[index], "{")) depth += 1;
      else if (isChar(atoms[index], "}")) {
        depth -= 1;
        if (depth === 0) {
          close = index;
          break;
        }
      } else if (depth === 1 && isChar(atoms[index], ",")) commas.push(index);
    }
    if (close === -1) break;
    const inner = atoms.slice(open + 1, close);
    let alternatives: Atom[][];
    if (commas.length > 0) {
      const bounds = [open, ...commas, close];
      alternatives = bounds.slice(1).map((bound, at) => atoms.slice(bounds[at]! + 1, bound));
    } else {
      const text = inner.every((atom) => !atom.literal && !atom.expansion)
        ? inner.map((atom) => atom.text).join("")
        : "";
      const values = sequence(text);
      if (values === undefined) continue;
      alternatives = values.map((value) =>
        [...value].map((char) => ({ text: char, literal: true })),
      );
    }
    const prefix = atoms.slice(0, open);
    const suffix = atoms.slice(close + 1);
    const words: Atom[][] = [];
    for (const alternative of alternatives) {
      for (const word of braceExpand([...prefix, ...alternative, ...suffix], budget)) {
        words.push(word);
        budget.count += 1;
        if (budget.count > MAX_WORDS) throw new TooManyWordsError();
      }
    }
    return words;
  }
  return [atoms];
}

/** `1..5`, `a..e`, `10..1..3`: the words of a sequence expression, or undefined. */
function sequence(text: string): string[] | undefined {
  const match = SEQUENCE.exec(text);
  if (match === null) return undefined;
  const [, from = "", to = "", stepText] = match;
  const numeric = /\d/.test(from) && /\d/.test(to);
  if (!numeric && (/\d/.test(from) || /\d/.test(to))) return undefined;
  const start = numeric ? Number(from) : from.charCodeAt(0);
  const stop = numeric ? Number(to) : to.charCodeAt(0);
  const step = Math.abs(Number(stepText ?? 1)) || 1;
  const count = Math.floor(Math.abs(stop - start) / step) + 1;
  if (count > MAX_WORDS) throw new TooManyWordsError();
  const direction = stop >= start ? 1 : -1;
  return Array.from({ length: count }, (_, index) => {
    const value = start + direction * step * index;
    return numeric ? String(value) : String.fromCharCode(value);
  });
}
