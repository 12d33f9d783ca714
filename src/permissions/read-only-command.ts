import { isHarmlessDevice, isWrite, operands } from "./command-paths.js";
import { abbreviatesOption } from "./long-option.js";
import { gitNotReadOnly } from "./read-only-git.js";
import { sedIsReadOnly } from "./sed-script.js";
import type { SimpleCommand } from "./simple-command.js";
import { SHELLS } from "./unwrap-command.js";

/**
 * Programs that only read and print, whatever their words (none of their
 * options writes a file or runs a program).
 */
const READ_ONLY = new Set(
  (
    "ls cat head tail wc pwd echo printf which whereis type true false test [ [[ : basename " +
    "dirname realpath readlink stat du df id whoami groups uname uptime nproc free ps pgrep " +
    "diff cmp comm md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum " +
    "cut tr nl od hexdump strings column fold fmt paste expand unexpand rev tac join seq sleep " +
    "grep egrep fgrep zgrep jq locale tty arch getconf lsblk lscpu lsb_release cd pushd popd " +
    "dirs wait jobs exit numfmt base32 base64 basenc tsort lsof cal file for ] ]]"
  ).split(" "),
);

/** Assignments that cannot change what a command runs or where it writes. */
const HARMLESS_ASSIGNMENT =
  /^(?:LANG|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|COLUMNS|LINES|TERM|CI|DEBUG)=/;

/**
 * Options of otherwise read-only programs that write files or run programs: short forms as
 * a pattern, long ones by name. GNU getopt and git accept any unambiguous abbreviation of a
 * long option (`sort --out=F` is `--output=F`), so a long option that begins a dangerous
 * one's name counts as that one.
 */
const DANGEROUS_OPTIONS: Record<string, { short?: RegExp; long?: string[] }> = {
  sort: { short: /^-[a-zA-Z]*o/, long: ["output", "compress-program"] },
  rg: { long: ["pre", "pre-glob"] },
  fd: { short: /^-[a-zA-Z]*[xX]/, long: ["exec", "exec-batch"] },
  tree: { short: /^-(?:o|R)/ },
  date: { short: /^-[a-zA-Z]*s/, long: ["set"] },
  uniq: {},
  xxd: { short: /^-[a-zA-Z]*r/ },
  file: { short: /^-[a-zA-Z]*C/, long: ["compile"] },
  hostname: { short: /^-(?:F|b)/, long: ["file", "boot"] },
};

/** Programs whose safety depends on their options: any word only known at run time could be one. */
const OPTION_SENSITIVE = new Set(["find", "sort", "rg", "fd", "git", "tree", "xxd"]);
const FIND_SAFE =
  /^(?:-name|-iname|-path|-ipath|-wholename|-iwholename|-regex|-iregex|-lname|-ilname|-type|-xtype|-maxdepth|-mindepth|-newer|-anewer|-cnewer|-mtime|-mmin|-atime|-amin|-ctime|-cmin|-size|-empty|-perm|-user|-group|-uid|-gid|-nouser|-nogroup|-links|-inum|-samefile|-readable|-writable|-executable|-print|-print0|-printf|-ls|-prune|-quit|-depth|-xdev|-mount|-follow|-daystart|-regextype|-noleaf|-true|-false|-not|-and|-or|-a|-o|-L|-P|-H|-O\d|-D|-nowarn|-warn|-fstype|-used|-context)$/;
const PATTERN_TAKERS =
  /^-(?:i?name|i?path|i?wholename|i?regex|i?lname|newer|perm|size|type|fstype|printf|context)$/;
const AWK_DANGER = /system|getline|\||>|@|close|fflush|ENVIRON|PROCINFO/;

/**
 * Why a simple command is not known to be read-only, or undefined when it
 * only reads and prints (to its output, /dev/null or the terminal).
 */
export function notReadOnlyReason(command: SimpleCommand): string | undefined {
  if (command.via !== undefined) {
    return `it runs through ${command.via}, which the gate does not vouch for`;
  }
  const assignment = command.assignments?.find((word) => !HARMLESS_ASSIGNMENT.test(word));
  if (assignment !== undefined) {
    return `it sets ${assignment.split("=")[0]}, which can change what runs`;
  }
  for (const redirect of command.redirects) {
    if (isWrite(redirect.op, redirect.target) && !isHarmlessDevice(redirect.target)) {
      return `it writes to ${redirect.target}`;
    }
  }
  const [program, ...args] = command.argv;
  if (program === undefined) return undefined;
  if (/[$`]/.test(program)) return `the program (${program}) is only known when the command runs`;
  const inline = inlineCodeReason(program, args, command);
  if (inline !== undefined) return inline;
  if (OPTION_SENSITIVE.has(program) && args.some((arg) => /[$`]/.test(arg))) {
    return `${program} gets a word only known when the command runs`;
  }
  const dangerous = DANGEROUS_OPTIONS[program];
  if (dangerous !== undefined) {
    if (program === "uniq" || program === "xxd" || program === "hostname") {
      if (operands(args).length > (program === "hostname" ? 0 : 1)) {
        return `${program} with these words writes or runs something`;
      }
    }
    if (
      args.some(
        (arg) =>
          (dangerous.short?.test(arg) === true && !arg.startsWith("--")) ||
          abbreviatesOption(arg, dangerous.long ?? []),
      )
    ) {
      return `${program} with these options writes or runs something`;
    }
    return undefined;
  }
  if (READ_ONLY.has(program)) return undefined;
  if (program === "command" && /^-[vV]$/.test(args[0] ?? "")) return undefined;
  if (program === "git") return gitNotReadOnly(args);
  if (program === "sed") return sedIsReadOnly(args) ? undefined : "sed may edit or write files";
  if (program === "find") return findNotReadOnly(args);
  if (program === "awk" || program === "gawk" || program === "mawk") return awkNotReadOnly(args);
  return `${program} is not known to be read-only`;
}

/**
 * Why a command runs code the gate cannot read: a shell or interpreter fed by
 * a pipe, a script file or `-c`/`-e` code, `source`, `awk` calling out.
 */
export function inlineCodeReason(
  program: string,
  args: string[],
  command: SimpleCommand,
): string | undefined {
  if (program === "source" || program === ".")
    return `${program} runs a script the gate cannot read`;
  if (SHELLS.has(program)) {
    return operands(args).length === 0
      ? `${program} runs a script from its input, which the gate cannot read`
      : `${program} runs a script the gate cannot read`;
  }
  if (
    /^(?:python[\d.]*|perl|ruby|node|nodejs|bun|deno|php|lua[\d.]*|Rscript|osascript|tclsh|expect)$/.test(
      program,
    )
  ) {
    const code = args.find((arg) => /^-[a-zA-Z]*[cerp]$|^--(?:eval|print)$|^eval$/.test(arg));
    if (code !== undefined) return `${program} ${code} runs code the gate cannot read`;
    if (operands(args).length === 0 || command.redirects.some((item) => item.body !== undefined)) {
      return `${program} runs code from its input, which the gate cannot read`;
    }
  }
  if (/^[gm]?awk$/.test(program) && /system\s*\(|\|/.test(args.join(" "))) {
    return `${program} runs commands from its program`;
  }
  return undefined;
}

function findNotReadOnly(args: string[]): string | undefined {
  let started = false;
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index]!;
    if (word.startsWith("-") && word !== "-") {
      started = true;
      if (!FIND_SAFE.test(word))
        return `find ${word} can delete files, write files or run programs`;
      if (PATTERN_TAKERS.test(word)) index += 1;
      else if (
        /^-(?:maxdepth|mindepth|mtime|mmin|atime|amin|ctime|cmin|user|group|uid|gid|links|inum|samefile|regextype|used|D|anewer|cnewer)$/.test(
          word,
        )
      )
        index += 1;
    } else if (/[*?[]/.test(word) && (started || word.startsWith("-") === false)) {
      return "find gets a pattern the shell could expand into an option";
    }
  }
  return undefined;
}

function awkNotReadOnly(args: string[]): string | undefined {
  if (args.some((arg) => /^\$\{?[A-Za-z_]\w*\}?$|\$\(|`/.test(arg))) {
    return "awk gets a word only known when the command runs";
  }
  let program: string | undefined;
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index]!;
    if (
      /^(?:-f|-i|-l|-E)/.test(word) ||
      abbreviatesOption(word, ["file", "include", "load", "exec"])
    ) {
      return "awk runs a program file the gate cannot read";
    }
    if (/^(?:-v|-F|--assign|--field-separator)$/.test(word)) index += 1;
    else if (word === "-e" || word === "--source")
      program = (program ?? "") + (args[++index] ?? "");
    else if (!word.startsWith("-") && program === undefined) program = word;
  }
  if (program === undefined) return "awk reads its program from somewhere the gate cannot see";
  return AWK_DANGER.test(program) ? "awk's program may run commands or write files" : undefined;
}
