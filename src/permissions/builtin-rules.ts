import { posix } from "node:path";
import type { SimpleCommand } from "./split-command.js";

/**
 * rudder's own judgement of one simple command, before and after the user's
 * rules: a deny list no user rule can lift, and a list of destructive or
 * overwriting commands that are asked about. Only the program that runs is
 * judged (`echo rm file` mentions rm, it does not run it).
 */

const PRIVILEGE = new Set(["sudo", "su", "doas", "pkexec", "run0"]);
const POWER = new Set(["shutdown", "reboot", "halt", "poweroff"]);
const POWER_VERBS = new Set(["poweroff", "reboot", "halt", "kexec", "soft-reboot"]);
const FORMATTERS = new Set(["mke2fs", "mkswap", "wipefs", "blkdiscard"]);
const DEVICE_WRITERS = new Set(["tee", "shred", "cp", "mv", "install", "truncate"]);
const REMOVERS = new Set(["rm", "rmdir", "shred", "truncate", "unlink", "srm"]);
const BLOCK_DEVICE = /^\/dev\/(?:(?:sd|hd|vd|xvd)[a-z]|nvme\d|mmcblk\d|disk\/)/;
const SYSTEM_DIRECTORY =
  /^\/(?:etc|usr|boot|sys|proc|bin|sbin|lib|lib32|lib64|libx32|root|var\/lib|dev)(?:\/|$)/;
const HARMLESS_DEVICE =
  /^\/dev\/(?:null|zero|stdout|stderr|stdin|tty|fd\/\d+|full|random|urandom)$/;
const WRITE_OPS = new Set([">", ">>", ">|", "<>"]);

/** Why `command` is on the built-in deny list, or undefined. */
export function builtinDenyReason(command: SimpleCommand): string | undefined {
  const [program = "", ...args] = command.argv;
  if (PRIVILEGE.has(program)) return `${program} runs commands with other privileges`;
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
  if (program.startsWith("mkfs") || FORMATTERS.has(program))
    return `${program} formats or wipes a disk`;
  if (program === "dd") {
    if (args.some((arg) => arg.startsWith("if=")))
      return "dd if= copies raw data (it is on the deny list)";
    const target = args.find((arg) => arg.startsWith("of="));
    if (target && isBlockDevice(target.slice(3)))
      return `dd writes to the block device ${target.slice(3)}`;
  }
  if (program === "rm" && args.includes("--no-preserve-root")) return "rm --no-preserve-root";
  if (["rm", "chmod", "chown", "chgrp"].includes(program) && isRecursive(program, args)) {
    const root = operands(args).find(isRootTarget);
    if (root !== undefined) return `${program} applied recursively to ${root}`;
  }
  if (DEVICE_WRITERS.has(program)) {
    const device = operands(args).find(isBlockDevice);
    if (device !== undefined) return `${program} writes to the block device ${device}`;
  }
  const redirect = command.redirects.find(
    (item) => isWrite(item.op, item.target) && isBlockDevice(item.target),
  );
  if (redirect) return `output is redirected to the block device ${redirect.target}`;
  return undefined;
}

/** A fork bomb such as `:(){ :|:& };:`, judged on the raw line. */
export function forkBombReason(line: string): string | undefined {
  return /([A-Za-z_:][\w:]*)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&/.test(line)
    ? "a fork bomb"
    : undefined;
}

/** Why `command` destroys or overwrites something and should be asked about, or undefined. */
export function destructiveReason(command: SimpleCommand): string | undefined {
  const [program = "", ...args] = command.argv;
  if (/[$`*?[{]/.test(program) && program !== "[" && program !== "[[") {
    return `the program (${program}) is only known when the command runs`;
  }
  if (REMOVERS.has(program)) return `${program} deletes or destroys files`;
  if (program === "chmod") {
    if (isRecursive(program, args)) return "chmod -R changes permissions recursively";
    if (args.some((arg) => /777|a\+rwx|ugo\+rwx|o\+w/.test(arg)))
      return "chmod makes files writable by everyone";
  }
  if ((program === "chown" || program === "chgrp") && isRecursive(program, args)) {
    return `${program} -R changes ownership recursively`;
  }
  if (program === "git") {
    const reason = destructiveGit(args);
    if (reason !== undefined) return reason;
  }
  if (program === "find" && args.includes("-delete")) return "find -delete deletes files";
  const redirect = command.redirects.find(
    (item) => isWrite(item.op, item.target) && isSystemPath(item.target),
  );
  if (redirect) return `output is written into the system path ${redirect.target}`;
  const target = writtenPaths(program, args).find(isSystemPath);
  if (target !== undefined) return `${program} writes into the system path ${target}`;
  return undefined;
}

function destructiveGit(args: string[]): string | undefined {
  let index = 0;
  while (index < args.length && args[index]!.startsWith("-")) {
    index += /^(?:-C|-c|--git-dir|--work-tree|--namespace)$/.test(args[index]!) ? 2 : 1;
  }
  const subcommand = args[index];
  const rest = args.slice(index + 1);
  if (subcommand === "reset" && rest.includes("--hard")) return "git reset --hard discards changes";
  if (subcommand === "clean" && rest.some((arg) => arg === "--force" || /^-[a-zA-Z]*f/.test(arg))) {
    return "git clean -f deletes untracked files";
  }
  if (
    subcommand === "push" &&
    rest.some(
      (arg) =>
        /^(?:--force|--force-with-lease|--mirror)(?:=|$)/.test(arg) ||
        /^-[a-zA-Z]*f/.test(arg) ||
        /^\+/.test(arg),
    )
  ) {
    return "git push --force rewrites remote history";
  }
  return undefined;
}

/** Paths a program writes to: tee's files, the destination of cp/mv/install/ln/rsync, sed -i files, dd of=. */
function writtenPaths(program: string, args: string[]): string[] {
  const files = operands(args);
  if (program === "tee") return files;
  if (["cp", "mv", "install", "ln", "rsync", "scp"].includes(program)) {
    const directory = args.findIndex((arg) => arg === "-t" || arg === "--target-directory");
    if (directory !== -1 && args[directory + 1] !== undefined) return [args[directory + 1]!];
    const joined = args.find((arg) => arg.startsWith("--target-directory="));
    if (joined !== undefined) return [joined.slice("--target-directory=".length)];
    return files.slice(-1);
  }
  if (
    (program === "sed" || program === "perl") &&
    args.some((arg) => /^-[a-zA-Z]*i/.test(arg) || arg.startsWith("--in-place"))
  ) {
    return files;
  }
  if (program === "dd")
    return args.filter((arg) => arg.startsWith("of=")).map((arg) => arg.slice(3));
  return [];
}

/** Words that are not options (everything after `--` counts). */
function operands(args: string[]): string[] {
  const end = args.indexOf("--");
  const before = end === -1 ? args : args.slice(0, end);
  const after = end === -1 ? [] : args.slice(end + 1);
  return [...before.filter((arg) => !arg.startsWith("-") || arg === "-"), ...after];
}

function isRecursive(program: string, args: string[]): boolean {
  const letters = program === "rm" ? /^-[a-zA-Z]*[rR]/ : /^-[a-zA-Z]*R/;
  return args.some((arg) => arg === "--recursive" || (!arg.startsWith("--") && letters.test(arg)));
}

function normalize(path: string): string {
  return posix.normalize(path).replace(/\/+$/, "") || "/";
}

function isRootTarget(path: string): boolean {
  if (!path.startsWith("/")) return false;
  const normalized = normalize(path);
  return normalized === "/" || normalized === "/*" || normalized === "/.*";
}

/** A disk, or a pattern under /dev that the shell could expand to one. */
function isBlockDevice(path: string): boolean {
  const normalized = normalize(path);
  return (
    BLOCK_DEVICE.test(normalized) || (normalized.startsWith("/dev/") && /[*?[]/.test(normalized))
  );
}

function isSystemPath(path: string): boolean {
  if (!path.startsWith("/")) return false;
  const normalized = normalize(path);
  return SYSTEM_DIRECTORY.test(normalized) && !HARMLESS_DEVICE.test(normalized);
}

function isWrite(op: string, target: string): boolean {
  return WRITE_OPS.has(op) || (op === ">&" && !/^(?:\d+|-)$/.test(target));
}
