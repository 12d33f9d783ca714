/**
 * A command line made only of plain words: letters, digits and `_-./=,:@%+`, between spaces
 * or tabs. Such a line has no quote, expansion, operator, redirection, glob, comment or
 * reserved word, so bash runs exactly its words, and the gate reads it without the grammar
 * (bash-parser.ts), which then loads only for lines with shell syntax. The words are what the
 * grammar would read (test/permissions/plain-command.test.ts compares the two).
 */
import type { SimpleCommand } from "./simple-command.js";

const PLAIN_WORD = "[A-Za-z0-9_\\-./=,:@%+]+";
const PLAIN_LINE = new RegExp(`^[ \\t]*${PLAIN_WORD}(?:[ \\t]+${PLAIN_WORD})*[ \\t]*$`);
/** A character outside every plain word: the line has shell syntax. */
const NOT_PLAIN = /[^A-Za-z0-9_\-./=,:@%+ \t]/;
/** Words bash reads as syntax where a command may start; a line with one goes to the grammar. */
const RESERVED = new Set([
  "case",
  "coproc",
  "do",
  "done",
  "elif",
  "else",
  "esac",
  "fi",
  "for",
  "function",
  "if",
  "in",
  "select",
  "then",
  "time",
  "until",
  "while",
]);

/** The one simple command of a plain-word line, or undefined when the line needs the grammar. */
export function plainCommand(line: string): SimpleCommand[] | undefined {
  if (!PLAIN_LINE.test(line)) return undefined;
  const argv = line.trim().split(/[ \t]+/);
  if (argv.some((word) => RESERVED.has(word))) return undefined;
  return [{ argv, redirects: [] }];
}

/**
 * Whether text that may be the start of a command line (streamed in) already shows shell
 * syntax, so the grammar will be needed to judge it.
 */
export function showsShellSyntax(text: string): boolean {
  return NOT_PLAIN.test(text);
}
