import type { SimpleCommand } from "./split-command.js";

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
  "function",
]);
/** Headers whose words are data, not a command (`for x in a b`, `case $x in`). */
const HEADERS = new Set(["for", "select", "case"]);
const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/**
 * The command(s) a simple command really runs: keywords and leading variable
 * assignments dropped, wrappers peeled, `sh -c` / `eval` scripts split, and
 * `find -exec` commands listed after the `find` itself.
 */
export function unwrapCommand(
  command: SimpleCommand,
  depth: number,
  split: Split,
): SimpleCommand[] {
  let argv = command.argv;
  let written = argv[0];
  while (argv.length > 0 && KEYWORDS.has(argv[0]!)) argv = argv.slice(1);
  if (argv.length > 0 && HEADERS.has(argv[0]!)) return [];
  for (let guard = 0; guard < 32; guard += 1) {
    while (argv.length > 0 && ASSIGNMENT.test(argv[0]!)) argv = argv.slice(1);
    if (argv.length === 0) break;
    written = argv[0]!;
    argv = [programName(written), ...argv.slice(1)];
    const program = argv[0]!;
    const script = shellScript(program, argv);
    if (script !== undefined) {
      const inner = split(script, depth + 1);
      return command.redirects.length > 0
        ? [{ argv: [], redirects: command.redirects }, ...inner]
        : inner;
    }
    const unwrapped = peelWrapper(program, argv.slice(1));
    if (unwrapped === undefined) break;
    if (program === "watch" && unwrapped.length > 0) {
      // watch hands its words to `sh -c` as one line.
      const inner = split(unwrapped.join(" "), depth + 1);
      return command.redirects.length > 0
        ? [{ argv: [], redirects: command.redirects }, ...inner]
        : inner;
    }
    argv = unwrapped.length > 0 ? unwrapped : program === "xargs" ? ["echo"] : [program];
    if (unwrapped.length === 0) break;
  }
  if (argv.length === 0 && command.redirects.length === 0) return [];
  const main: SimpleCommand = { argv, redirects: command.redirects };
  if (written !== undefined && argv.length > 0 && written !== argv[0])
    main.programAsWritten = written;
  return argv[0] === "find" ? [main, ...findExecCommands(argv)] : [main];
}

/** `/usr/bin/rm` -> `rm`; words with expansions are kept whole. */
function programName(word: string): string {
  if (word.includes("$") || word.includes("`")) return word;
  const slash = word.lastIndexOf("/");
  return slash === -1 || slash === word.length - 1 ? word : word.slice(slash + 1);
}

/** The script of `bash -c SCRIPT`, `sh -lc SCRIPT`, `eval WORDS...`. */
function shellScript(program: string, argv: string[]): string | undefined {
  if (program === "eval") return argv.slice(1).join(" ");
  if (!SHELLS.has(program)) return undefined;
  let index = program === "busybox" ? 2 : 1;
  if (program === "busybox" && !SHELLS.has(argv[1] ?? "")) return undefined;
  let hasCommandFlag = false;
  for (; index < argv.length; index += 1) {
    const word = argv[index]!;
    if (word === "--" || word === "-") return hasCommandFlag ? argv[index + 1] : undefined;
    if (/^[-+][oO]$/.test(word)) {
      index += 1;
    } else if (/^[-+][A-Za-z]+$/.test(word)) {
      if (word.startsWith("-") && word.includes("c")) hasCommandFlag = true;
    } else if (!word.startsWith("--")) {
      return hasCommandFlag ? word : undefined;
    }
  }
  return undefined;
}

/** Options that take a value, per wrapper, and whether a leading duration follows (timeout). */
const WRAPPERS: Record<string, { valued: Set<string>; positional?: number; stopAt?: Set<string> }> =
  {
    env: { valued: new Set(["-u", "--unset", "-C", "--chdir", "-S", "--split-string"]) },
    nohup: { valued: new Set() },
    nice: { valued: new Set(["-n", "--adjustment"]) },
    ionice: { valued: new Set(["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"]) },
    time: { valued: new Set(["-f", "--format", "-o", "--output"]) },
    command: { valued: new Set(), stopAt: new Set(["-v", "-V"]) },
    builtin: { valued: new Set() },
    exec: { valued: new Set(["-a"]) },
    timeout: { valued: new Set(["-s", "--signal", "-k", "--kill-after"]), positional: 1 },
    setsid: { valued: new Set() },
    taskset: { valued: new Set(), positional: 1 },
    chrt: { valued: new Set(), positional: 1 },
    flock: { valued: new Set(["-w", "--timeout", "-E", "--conflict-exit-code"]), positional: 1 },
    strace: {
      valued: new Set(["-o", "-e", "-p", "-s", "-u", "-a", "-b", "-E", "-I", "-O", "-S", "-X"]),
    },
    ltrace: { valued: new Set(["-o", "-e", "-p", "-s", "-u", "-a", "-n"]) },
    watch: { valued: new Set(["-n", "--interval", "-q", "--equexit"]) },
    stdbuf: { valued: new Set(["-i", "-o", "-e", "--input", "--output", "--error"]) },
    xargs: {
      valued: new Set([
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-lines",
        "--replace",
        "--eof",
        "--max-chars",
      ]),
    },
  };

/** The wrapped command's words, or undefined when `program` wraps nothing. */
function peelWrapper(program: string, args: string[]): string[] | undefined {
  const wrapper = WRAPPERS[program];
  if (wrapper === undefined) return undefined;
  let index = 0;
  while (index < args.length) {
    const word = args[index]!;
    if (wrapper.stopAt?.has(word)) return undefined;
    if (word === "--") {
      index += 1;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    const name = word.includes("=") ? word.slice(0, word.indexOf("=")) : word;
    index += 1;
    if (wrapper.valued.has(name) && !word.includes("=")) index += 1;
    if (program === "nice" && /^-\d+$/.test(word)) continue;
  }
  if (program === "env") {
    while (index < args.length && ASSIGNMENT.test(args[index]!)) index += 1;
  }
  index += wrapper.positional ?? 0;
  return args.slice(index);
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
    const found: SimpleCommand = { argv: [program, ...words.slice(1)], redirects: [] };
    if (program !== words[0]) found.programAsWritten = words[0]!;
    commands.push(found);
  }
  return commands;
}
