import type { SimpleCommand } from "./simple-command.js";
import { peelWrapper, WRAPPERS } from "./wrappers.js";

type Split = (line: string, depth: number) => SimpleCommand[];

/** Words that only open or close a compound command; the command follows them. */
const KEYWORDS = new Set([
  "{",
  "}",
  "!",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "esac",
]);
export const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
/** Options after which `script`, `flock` and `sg` take a command line (`su -c` stays `su`, denied). */
const COMMAND_OPTIONS: Record<string, RegExp> = {
  script: /^(?:-[a-zA-Z]*c|--command)$/,
  flock: /^(?:-c|--command)$/,
  sg: /^-c$/,
};

/**
 * The command(s) a simple command really runs: keywords dropped, leading
 * variable assignments set aside, wrappers peeled, the scripts of `sh -c`,
 * `eval`, `trap`, `alias` and of heredocs fed to a shell split, and the
 * commands of `find -exec`, `xargs`, `watch` and the like listed, marked with
 * `via` when another program starts them.
 */
export function unwrapCommand(
  command: SimpleCommand,
  depth: number,
  split: Split,
): SimpleCommand[] {
  let argv = command.argv;
  let written = argv[0];
  let via = command.via;
  const assignments: string[] = [];
  const nested = (script: string, how: string): SimpleCommand[] => {
    const inner = split(script, depth + 1).map((item) => ({ ...item, via: item.via ?? how }));
    const outer: SimpleCommand = { argv: [], redirects: command.redirects };
    if (assignments.length > 0) outer.assignments = assignments;
    if (command.unknown !== undefined) outer.unknown = command.unknown;
    const kept = command.redirects.length > 0 || assignments.length > 0 || command.unknown;
    return kept ? [outer, ...inner] : inner;
  };
  for (let dropped = true; dropped; ) {
    const before = argv.length;
    while (argv.length > 0 && KEYWORDS.has(argv[0]!)) argv = argv.slice(1);
    if (argv[0] === "function") argv = argv.slice(2);
    if (argv[0] === "coproc") {
      via = "coproc";
      argv = argv[2] === "{" ? argv.slice(2) : argv.slice(1);
    }
    dropped = argv.length < before;
  }
  for (let guard = 0; guard < 32; guard += 1) {
    while (argv.length > 0 && ASSIGNMENT.test(argv[0]!)) {
      assignments.push(argv[0]!);
      argv = argv.slice(1);
    }
    if (argv.length === 0) break;
    written = argv[0]!;
    argv = [programName(written), ...argv.slice(1)];
    const program = argv[0]!;
    const script = scriptOf(program, argv, command);
    if (script !== undefined) return nested(script.text, via ?? script.via);
    const unwrapped = peelWrapper(program, argv.slice(1));
    if (unwrapped === undefined) break;
    const wrapper = WRAPPERS[program]!;
    if (wrapper.starts === true) via ??= program;
    if (wrapper.line === true && unwrapped.length > 0) {
      // watch, parallel and ssh hand their words to a shell as one line.
      return nested(unwrapped.join(" "), via ?? program);
    }
    argv = unwrapped.length > 0 ? unwrapped : program === "xargs" ? ["echo"] : [program];
    if (unwrapped.length === 0) break;
  }
  const empty = argv.length === 0 && command.redirects.length === 0 && assignments.length === 0;
  if (empty && command.unknown === undefined) return [];
  const main: SimpleCommand = { argv, redirects: command.redirects };
  if (written !== undefined && argv.length > 0 && written !== argv[0])
    main.programAsWritten = written;
  if (assignments.length > 0) main.assignments = assignments;
  if (via !== undefined) main.via = via;
  if (command.unknown !== undefined) main.unknown = command.unknown;
  if (command.globbed !== undefined) main.globbed = command.globbed;
  if (argv[0] !== "find") return [main];
  const started = findExecCommands(argv).flatMap((found) => unwrapCommand(found, depth + 1, split));
  return [main, ...started];
}

/** `/usr/bin/rm` -> `rm`; words with expansions are kept whole. */
function programName(word: string): string {
  if (word.includes("$") || word.includes("`")) return word;
  const slash = word.lastIndexOf("/");
  return slash === -1 || slash === word.length - 1 ? word : word.slice(slash + 1);
}

/**
 * The shell script a command runs and how: `bash -c SCRIPT`, `eval WORDS`,
 * `trap SCRIPT SIGNAL`, `alias NAME=SCRIPT`, `env -S LINE`, `script -c LINE`,
 * `flock FILE -c LINE`, a heredoc or here-string fed to a shell, and `-c` of a
 * program only known when the line runs (`$SHELL -c ...`).
 */
function scriptOf(
  program: string,
  argv: string[],
  command: SimpleCommand,
): { text: string; via: string } | undefined {
  if (program === "eval") return { text: argv.slice(1).join(" "), via: "eval" };
  if (program === "trap" && argv[1] !== undefined && !argv[1].startsWith("-")) {
    return { text: argv[1], via: "trap" };
  }
  if (program === "alias") {
    const values = argv.slice(1).filter((word) => word.includes("="));
    return {
      text: values.map((word) => word.slice(word.indexOf("=") + 1)).join("\n"),
      via: "alias",
    };
  }
  if (program === "env") {
    const at = argv.findIndex((word) => /^(?:-S|--split-string)(?:=|$)/.test(word));
    if (at !== -1) {
      const joined = argv[at]!.includes("=") ? argv[at]!.slice(argv[at]!.indexOf("=") + 1) : "";
      const rest = joined === "" ? argv.slice(at + 1) : [joined, ...argv.slice(at + 1)];
      return { text: rest.join(" "), via: "env -S" };
    }
  }
  const option = COMMAND_OPTIONS[program];
  if (option !== undefined) {
    const at = argv.findIndex((word, index) => index > 0 && option.test(word));
    if (at !== -1 && argv[at + 1] !== undefined) {
      return { text: argv[at + 1]!, via: `${program} -c` };
    }
  }
  if (/[$`]/.test(program)) {
    const at = argv.indexOf("-c");
    if (at > 0 && argv[at + 1] !== undefined) return { text: argv[at + 1]!, via: `${program} -c` };
    return undefined;
  }
  if (!SHELLS.has(program)) return undefined;
  const shell = shellInvocation(program, argv);
  if (shell.script !== undefined) return { text: shell.script, via: `${program} -c` };
  if (shell.readsInput) {
    const fed = command.redirects.find((item) => item.body !== undefined);
    if (fed !== undefined) return { text: fed.body!, via: `${program} ${fed.op}` };
  }
  return undefined;
}

/** What a shell runs: the script of `-c`, or its input when it names no script file. */
function shellInvocation(
  program: string,
  argv: string[],
): { script?: string; readsInput: boolean } {
  let index = program === "busybox" ? 2 : 1;
  if (program === "busybox" && !SHELLS.has(argv[1] ?? "")) return { readsInput: false };
  let hasCommandFlag = false;
  for (; index < argv.length; index += 1) {
    const word = argv[index]!;
    if (word === "--" || word === "-") {
      const next = argv[index + 1];
      if (hasCommandFlag)
        return next === undefined ? { readsInput: false } : { script: next, readsInput: false };
      return { readsInput: next === undefined };
    }
    if (/^[-+][oO]$/.test(word)) {
      index += 1;
    } else if (/^[-+][A-Za-z]+$/.test(word)) {
      if (word.startsWith("-") && word.includes("c")) hasCommandFlag = true;
      if (word.startsWith("-") && word.includes("s")) return { readsInput: true };
    } else if (!word.startsWith("--")) {
      return hasCommandFlag ? { script: word, readsInput: false } : { readsInput: false };
    }
  }
  return { readsInput: !hasCommandFlag };
}

/** The commands `find ... -exec CMD ... ;` (and -execdir, -ok, -okdir) runs. */
function findExecCommands(argv: string[]): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  for (let index = 1; index < argv.length; index += 1) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(argv[index]!)) continue;
    const words: string[] = [];
    for (
      index += 1;
      index < argv.length && argv[index] !== ";" && argv[index] !== "+";
      index += 1
    ) {
      words.push(argv[index]!);
    }
    if (words.length === 0) continue;
    const program = programName(words[0]!);
    const found: SimpleCommand = {
      argv: [program, ...words.slice(1)],
      redirects: [],
      via: "find -exec",
    };
    if (program !== words[0]) found.programAsWritten = words[0]!;
    commands.push(found);
  }
  return commands;
}
