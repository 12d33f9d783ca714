/**
 * Whether the gate understands every word of a command, which it must before a command runs
 * unsandboxed without asking: no expansion that runs code or whose value it cannot know (the
 * parser notes those), no program name made by a glob, no glob reaching past the workspace,
 * and no variable assignment through an array subscript (`printf -v 'a[$(cmd)]'`).
 */
import { type CommandContext, isOutsideWorkspace } from "./command-paths.js";
import type { SimpleCommand } from "./simple-command.js";

const GLOB = /[*?[]/;

/** Why a word of `command` is not understood, or undefined when every word is. */
export function notUnderstoodReason(
  command: SimpleCommand,
  context: CommandContext,
): string | undefined {
  if (command.unknown !== undefined) return command.unknown;
  const [program, ...args] = command.argv;
  const written = command.programAsWritten ?? program;
  for (const word of command.globbed ?? []) {
    if (word === written && GLOB.test(word) && program !== "[" && program !== "[[") {
      return `the program (${word}) is a pattern the shell matches against file names`;
    }
    const path = word.slice(word.indexOf("=") + 1);
    if (isOutsideWorkspace(path, context)) {
      return `${word} is a pattern matched against files outside the workspace`;
    }
  }
  if (program === "printf") {
    const target = variableOption(args);
    if (target !== undefined && !/^[A-Za-z_]\w*$/.test(target)) {
      return `printf -v ${target}: an array subscript is evaluated as code`;
    }
  }
  if (program === "test" || program === "[") {
    const at = args.indexOf("-v");
    if (at !== -1 && (args[at + 1] ?? "").includes("[")) {
      return "-v with an array subscript evaluates the subscript as code";
    }
  }
  return undefined;
}

/** The variable `printf -v NAME` (or `-vNAME`) assigns, when it assigns one. */
function variableOption(args: string[]): string | undefined {
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index]!;
    if (word === "--" || !word.startsWith("-")) return undefined;
    if (word === "-v") return args[index + 1] ?? "";
    if (word.startsWith("-v")) return word.slice(2);
  }
  return undefined;
}
