import {
  type CommandContext,
  isBlockDevice,
  isRecursive,
  isWrite,
  machineTarget,
  operands,
  resolvePath,
} from "./command-paths.js";
import type { SimpleCommand } from "./simple-command.js";

/**
 * rudder's deny list, which no rule, mode or confirmation lifts, sandboxed or
 * not: what is never wanted from an agent. Only the program that runs is
 * judged (`echo rm -rf /` mentions rm, it does not run it).
 */

const PRIVILEGE = new Set(["sudo", "su", "doas", "pkexec", "run0", "runuser", "setpriv", "calife"]);
const POWER = new Set(["shutdown", "reboot", "halt", "poweroff"]);
const POWER_VERBS = new Set(["poweroff", "reboot", "halt", "kexec", "soft-reboot"]);
const FORMATTERS = new Set([
  "mke2fs",
  "mkswap",
  "wipefs",
  "blkdiscard",
  "fdisk",
  "sfdisk",
  "gdisk",
  "sgdisk",
  "cfdisk",
  "parted",
  "mknod",
  "setcap",
]);
const DEVICE_WRITERS = new Set([
  "tee",
  "shred",
  "cp",
  "mv",
  "install",
  "truncate",
  "ln",
  "ddrescue",
  "socat",
  "pv",
]);
const REMOVERS = new Set(["rm", "shred", "srm", "unlink", "trash", "trash-put", "gio"]);
const INTERPRETERS = /^(?:python[\d.]*|perl|ruby|node|nodejs|bun|deno|php|lua[\d.]*)$/;
const MATCH_ALL = new Set([".", ".*", ".+", "^", "$", "", "^.*", "^.*$", "^."]);

/** Why `command` is on the built-in deny list, or undefined. */
export function builtinDenyReason(
  command: SimpleCommand,
  context: CommandContext,
): string | undefined {
  const [program = "", ...args] = command.argv;
  if (PRIVILEGE.has(program)) return `${program} runs commands with other privileges`;
  const named = globNamesDenied(program);
  if (named !== undefined) return `${program} could name ${named}, which is on the deny list`;
  if (POWER.has(program)) return `${program} stops or restarts the machine`;
  if (
    (program === "systemctl" || program === "loginctl") &&
    args.some((arg) => POWER_VERBS.has(arg))
  ) {
    return `${program} ${args.find((arg) => POWER_VERBS.has(arg))} stops or restarts the machine`;
  }
  if ((program === "init" || program === "telinit") && (args[0] === "0" || args[0] === "6")) {
    return `${program} ${args[0]} stops or restarts the machine`;
  }
  if (program.startsWith("mkfs") || FORMATTERS.has(program)) {
    return `${program} formats disks or changes devices and privileges`;
  }
  if (program === "dd" || program === "dcfldd") {
    if (args.some((arg) => arg.startsWith("if=")))
      return "dd if= copies raw data (it is on the deny list)";
    const target = args.find((arg) => arg.startsWith("of="));
    if (target && isBlockDevice(target.slice(3), context))
      return `dd writes to the block device ${target.slice(3)}`;
  }
  if (program === "rm" && args.includes("--no-preserve-root")) return "rm --no-preserve-root";
  const machine = machineReason(program, args, context);
  if (machine !== undefined) return machine;
  const kill = killEverythingReason(program, args);
  if (kill !== undefined) return kill;
  if (setsPrivilegeBits(program, args)) return `${program} sets a setuid or setgid bit`;
  if (DEVICE_WRITERS.has(program)) {
    const device = operands(args).find((word) =>
      isBlockDevice(word.replace(/^[A-Z-]+:/, ""), context),
    );
    if (device !== undefined) return `${program} writes to the block device ${device}`;
  }
  const redirect = command.redirects.find(
    (item) => isWrite(item.op, item.target) && isBlockDevice(item.target, context),
  );
  if (redirect) return `output is redirected to the block device ${redirect.target}`;
  if (INTERPRETERS.test(program) && forksForever(args.join(" "))) return "a fork bomb";
  return undefined;
}

/** Programs denied by name alone, which a glob in the program's place could name. */
const DENIED_NAMES = [...PRIVILEGE, ...POWER, ...FORMATTERS, "mkfs", "killall5"];

/** `su*`, `/???/s?do`: the denied program a glob could stand for, or undefined. */
function globNamesDenied(program: string): string | undefined {
  if (!/[*?[]/.test(program)) return undefined;
  const source = program
    .replace(/[.+^${}()|\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".")
    .replace(/\[!/g, "[^");
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^${source}$`);
  } catch {
    return undefined;
  }
  return DENIED_NAMES.find((name) => pattern.test(name));
}

/** Deleting, moving away or opening up the root folder, a system folder or a home. */
function machineReason(
  program: string,
  args: string[],
  context: CommandContext,
): string | undefined {
  const targets = (words: string[]) =>
    words
      .map((word) => resolvePath(word, context))
      .map((path) => (path === undefined ? undefined : machineTarget(path, context)))
      .find((target) => target !== undefined);
  if (REMOVERS.has(program)) {
    const target = targets(operands(args));
    if (target !== undefined) return `${program} would delete ${target}`;
  }
  if (["chmod", "chown", "chgrp", "setfacl"].includes(program) && isRecursive(program, args)) {
    const target = targets(operands(args));
    if (target !== undefined) return `${program} applied recursively to ${target}`;
  }
  if (program === "mv") {
    const target = targets(operands(args).slice(0, -1));
    if (target !== undefined) return `mv would move away ${target}`;
  }
  if (program === "rsync" && args.some((arg) => arg.startsWith("--delete"))) {
    const target = targets(operands(args).slice(-1));
    if (target !== undefined) return `rsync --delete would empty ${target}`;
  }
  if (program === "find") {
    const starts: string[] = [];
    for (const word of args) {
      if (word.startsWith("-") || word === "!" || word === "(") break;
      starts.push(word);
    }
    const deletes =
      args.includes("-delete") ||
      args.some(
        (word, index) =>
          /^-(?:exec|execdir|ok|okdir)$/.test(word) &&
          REMOVERS.has(args[index + 1]?.split("/").pop() ?? ""),
      );
    const target = deletes ? targets(starts) : undefined;
    if (target !== undefined) return `find would delete ${target}`;
  }
  return undefined;
}

/** `kill -9 -1`, `kill -- -1`, `killall5`, `pkill -u me`, `pkill .`: every process at once. */
function killEverythingReason(program: string, args: string[]): string | undefined {
  if (program === "killall5") return "killall5 signals every process";
  if (program === "kill") {
    let index = 0;
    if (/^(?:-s|-n|--signal)$/.test(args[0] ?? "")) index = 2;
    else if (/^-(?:\d+|[A-Za-z][A-Za-z0-9+-]*)$/.test(args[0] ?? "") && args.length > 1) index = 1;
    const pids = args.slice(index).filter((word) => word !== "--");
    if (pids.includes("-1")) return "kill -1 signals every process of the user";
  }
  if (program === "pkill" || program === "killall") {
    const valued = /^(?:-s|--signal|-u|-U|--euid|--uid|--user|-g|-G|-P|-t|-F|-n|-o|-c|-O|-y)$/;
    const words: string[] = [];
    for (let index = 0; index < args.length; index += 1) {
      const word = args[index]!;
      if (valued.test(word)) index += 1;
      else if (!word.startsWith("-") || word === "-") words.push(word);
    }
    const byUser = args.some((word) => /^(?:-u|-U|--user|--uid|--euid)(?:=|$)/.test(word));
    if ((byUser && words.length === 0) || words.some((word) => MATCH_ALL.has(word))) {
      return `${program} would signal every process of a user`;
    }
  }
  return undefined;
}

/** `chmod u+s`, `chmod 4755`, `install -m 2755`, `chmod g=rws`. */
function setsPrivilegeBits(program: string, args: string[]): boolean {
  const special = (mode: string): boolean =>
    /^0*[2-7][0-7]{3}$/.test(mode) ||
    mode.split(",").some((clause) => /^[ugoa]*[+=][rwxXstugo]*s/.test(clause));
  if (program === "chmod") return args.some(special);
  if (program === "install" || program === "mkdir") {
    return args.some(
      (arg, index) =>
        ((arg === "-m" || arg === "--mode") && special(args[index + 1] ?? "")) ||
        (arg.startsWith("--mode=") && special(arg.slice(7))) ||
        (/^-m./.test(arg) && special(arg.slice(2))),
    );
  }
  return false;
}

/**
 * A fork bomb on the raw line: a function that calls itself in the background
 * or through a pipe (`:(){ :|:& };:`, `f() { f & f; }`), or an endless loop that
 * starts a background job each time (`while true; do sleep 9 & done`).
 */
export function forkBombReason(line: string): string | undefined {
  const definition =
    /(?:^|[\s;&|({])(?:function\s+([^\s(){}|&;<>]+)\s*(?:\(\s*\))?|([^\s(){}|&;<>]+)\s*\(\s*\))\s*([{(])/g;
  for (const match of line.matchAll(definition)) {
    const name = match[1] ?? match[2]!;
    const open = match.index + match[0].length - 1;
    const body = blockBody(line, open);
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const calls = new RegExp(`(?:^|[\\s;&|({])${escaped}(?=$|[\\s;&|)}])`).test(body);
    if (calls && (BACKGROUND.test(body) || /(?<!\|)\|(?!\|)/.test(body))) return "a fork bomb";
  }
  const loop =
    /\b(?:while\s+(?:true|:|\[\s*1\s*\]|\(\(\s*1\s*\)\))|until\s+false|for\s*\(\(\s*;\s*;\s*\)\))\s*;?\s*do\b([\s\S]*?)\bdone\b/g;
  for (const match of line.matchAll(loop)) {
    if (BACKGROUND.test(match[1]!)) return "a fork bomb";
  }
  return undefined;
}

/** A lone `&` (not `&&`, `2>&1`, `&>` or `|&`). */
const BACKGROUND = /(?<![&>|])&(?![&>])/;

/** The text inside the brace or parenthesis at `open`, up to its match (or the end). */
function blockBody(text: string, open: number): string {
  const opener = text[open]!;
  const closer = opener === "{" ? "}" : ")";
  let depth = 0;
  for (let index = open; index < text.length; index += 1) {
    const char = text[index];
    if (char === "\\") index += 1;
    else if (char === opener) depth += 1;
    else if (char === closer) {
      depth -= 1;
      if (depth === 0) return text.slice(open + 1, index);
    }
  }
  return text.slice(open + 1);
}

/** Interpreter code that forks in a loop (`fork while fork`, `while True: os.fork()`). */
function forksForever(code: string): boolean {
  return /\bfork\b/.test(code) && /\b(?:while|until|loop)\b|\bfor\s*\(\s*;\s*;\s*\)/.test(code);
}
