/**
 * A shell command line split into the simple commands it would run, read with a real bash
 * grammar (tree-sitter-bash; see bash-parser.ts) rather than by hand.
 */
import { bashParser } from "./bash-parser.js";
import { LineVariables } from "./line-variables.js";
import { plainCommand } from "./plain-command.js";
import type { SimpleCommand } from "./simple-command.js";
import { CommandTooComplexError, SyntaxTreeCommands } from "./syntax-tree-commands.js";
import { unwrapCommand } from "./unwrap-command.js";

export type { Redirect, SimpleCommand } from "./simple-command.js";
export { CommandTooComplexError } from "./syntax-tree-commands.js";

/** Nesting of scripts (`bash -c`, `eval`, `trap`) beyond which a line is not judged. */
const MAX_DEPTH = 16;

/**
 * Splits a shell command line into the simple commands it would run: across `&&`, `||`,
 * `;`, `|`, `&`, newlines, subshells and compound commands, and into `$(...)`, backticks,
 * `<(...)`, arithmetic, `${...}`, expanding heredocs, and the scripts of `bash -c`, `sh -c`
 * and `eval`. Quotes are removed and brace expansions made (`s{u,}do` runs sudo). Wrappers
 * such as `env`, `nohup`, `timeout`, `xargs` are peeled off so the wrapped program is judged;
 * `find -exec` commands are listed too. Commands inside substitutions come before the command
 * that contains them. Words keep `$VAR` and `$(...)` as written, and a command notes the
 * first word the gate does not understand (`unknown`). A `for` loop's list is a command of
 * its own (`for` and the words). Throws `CommandTooComplexError` for a line the grammar
 * cannot read or nesting too deep to judge; `BashParserNotLoadedError` for a line with shell
 * syntax before `loadBashParser()` has resolved (a line of plain words needs no grammar:
 * plain-command.ts).
 */
export function splitCommand(line: string, depth = 0): SimpleCommand[] {
  if (depth > MAX_DEPTH) throw new CommandTooComplexError();
  const commands = plainCommand(line) ?? parsedCommands(line);
  return commands.flatMap((command) => unwrapCommand(command, depth, splitCommand));
}

/** The simple commands the grammar reads in `line`, before wrappers are peeled. */
export function parsedCommands(line: string): SimpleCommand[] {
  return bashParser().parse(line, (root) => {
    if (root.hasError) throw new CommandTooComplexError("the gate cannot parse this command");
    const reader = new SyntaxTreeCommands(line, new LineVariables(root));
    reader.statement(root);
    return reader.commands;
  });
}
