import { posix } from "node:path";

/** Where a command runs, for resolving the paths it names. */
export interface CommandContext {
  /** The workspace (the bash tool's starting folder). */
  workspace: string;
  /** The folder the command runs in, when known (`cd` moves it; `cd $X` makes it unknown). */
  cwd: string | undefined;
  /** The user's home; unknown, `~` and `$HOME` still resolve to a home of their own. */
  home: string | undefined;
}

/** Stands for the home when the caller did not give it (a NUL cannot be in a real path). */
const UNKNOWN_HOME = "/\u0000home";
const HOME_PREFIX = /^(?:~|\$HOME|\$\{HOME(?:[:?=+-][^}]*)?\})(?=\/|$)/;
/** `~+` and `$PWD` are the folder the command runs in. */
const WORKING_PREFIX = /^(?:~\+|\$PWD|\$\{PWD\})(?=\/|$)/;

export function homeOf(context: CommandContext): string {
  return context.home ?? UNKNOWN_HOME;
}

/**
 * The absolute, normalized path a word names, as the shell would start from:
 * `~`, `$HOME` and `${HOME}` are the home, relative paths start at the known
 * folder. Undefined when it depends on an unknown folder or variable.
 */
export function resolvePath(word: string, context: CommandContext): string | undefined {
  let path = word;
  const home = HOME_PREFIX.exec(path);
  const here = WORKING_PREFIX.exec(path);
  if (home) path = homeOf(context) + path.slice(home[0].length);
  else if (here) {
    if (context.cwd === undefined) return undefined;
    path = context.cwd + path.slice(here[0].length);
  } else if (/^~-(?=\/|$)/.test(path)) return undefined;
  else if (/^~[A-Za-z_][\w-]*(?=\/|$)/.test(path)) path = `/home/${path.slice(1)}`;
  if (path.includes("$") || path.includes("`")) {
    const variable = path.indexOf("$") === -1 ? path.indexOf("`") : path.indexOf("$");
    if (variable === 0 || !path.startsWith("/")) return undefined;
  }
  if (!path.startsWith("/")) {
    if (context.cwd === undefined) return undefined;
    path = posix.join(context.cwd, path);
  }
  return posix.normalize(path).replace(/(.)\/+$/, "$1");
}

/** A path segment that matches every name in its folder (`*`, `.*`, `{*,.*}`, `[a-z]*`, `?*`). */
function coversFolder(segment: string): boolean {
  const stripped = segment.replace(/\[[^\]]*\]/g, "?");
  return /^[*?.{},!]+$/.test(stripped) && /[*?]/.test(stripped);
}

const TOP_LEVEL = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "home",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "opt",
  "proc",
  "root",
  "sbin",
  "srv",
  "sys",
  "usr",
  "var",
  "snap",
  "Users",
  "System",
  "Library",
]);

/**
 * What a path means when it stands for the whole machine or a home: `/`, a
 * top-level system folder, a home folder, or everything in one of them however
 * globbed (`/*`, `~/.*`). Undefined for any other path.
 */
export function machineTarget(path: string, context: CommandContext): string | undefined {
  let base = path;
  while (base !== "/" && coversFolder(posix.basename(base))) base = posix.dirname(base);
  const home = homeOf(context);
  if (base === "/") return "the root folder";
  if (base === home || base === posix.dirname(home)) return "a home folder";
  const segments = base.split("/").filter((segment) => segment !== "");
  if (segments.length === 1 && TOP_LEVEL.has(segments[0]!)) return `the system folder ${base}`;
  if (segments.length === 2 && (segments[0] === "home" || segments[0] === "Users")) {
    return "a home folder";
  }
  return undefined;
}

/** Words that are not options (everything after `--` counts). */
export function operands(args: string[]): string[] {
  const end = args.indexOf("--");
  const before = end === -1 ? args : args.slice(0, end);
  const after = end === -1 ? [] : args.slice(end + 1);
  return [...before.filter((arg) => !arg.startsWith("-") || arg === "-"), ...after];
}

export function isRecursive(program: string, args: string[]): boolean {
  const letters = program === "rm" ? /^-[a-zA-Z]*[rR]/ : /^-[a-zA-Z]*R/;
  return args.some((arg) => arg === "--recursive" || (!arg.startsWith("--") && letters.test(arg)));
}

const BLOCK_DEVICE =
  /^\/dev\/(?:(?:sd|hd|vd|xvd)[a-z]|nvme\d|mmcblk\d|disk\/|block\/|mapper\/|loop\d|dm-\d|md\d|sr\d|nbd\d|zram\d|rbd\d|bcache\d|mtdblock\d|ram\d|root$)/;
const DEVICE_NAME = /^(?:(?:sd|hd|vd|xvd)[a-z]\d*|nvme\d+n\d+(?:p\d+)?|mmcblk\d+(?:p\d+)?)$/;

/** A disk, or a pattern under /dev that the shell could expand to one. */
export function isBlockDevice(word: string, context: CommandContext): boolean {
  const path = resolvePath(word, context);
  if (path === undefined) return DEVICE_NAME.test(posix.basename(word));
  return BLOCK_DEVICE.test(path) || (path.startsWith("/dev/") && /[*?[]/.test(path));
}

const SYSTEM_DIRECTORY =
  /^\/(?:etc|usr|boot|sys|proc|bin|sbin|lib|lib32|lib64|libx32|root|var\/lib|dev)(?:\/|$)/;
const HARMLESS_DEVICE =
  /^\/dev\/(?:null|zero|stdout|stderr|stdin|tty|fd\/\d+|full|random|urandom)$/;

export function isHarmlessDevice(word: string): boolean {
  return HARMLESS_DEVICE.test(posix.normalize(word));
}

export function isSystemPath(word: string, context: CommandContext): boolean {
  const path = resolvePath(word, context);
  return path !== undefined && SYSTEM_DIRECTORY.test(path) && !HARMLESS_DEVICE.test(path);
}

/** A path outside the workspace and the temporary folders, or one that cannot be known. */
export function isOutsideWorkspace(word: string, context: CommandContext): boolean {
  const path = resolvePath(word, context);
  if (path === undefined) return context.cwd === undefined || /^[$`~]/.test(word);
  if (HARMLESS_DEVICE.test(path) || /^\/(?:tmp|var\/tmp)(?:\/|$)/.test(path)) return false;
  const relative = posix.relative(context.workspace, path);
  return relative === ".." || relative.startsWith("../") || posix.isAbsolute(relative);
}

const WRITE_OPS = new Set([">", ">>", ">|", "<>"]);

export function isWrite(op: string, target: string): boolean {
  return WRITE_OPS.has(op) || (op === ">&" && !/^(?:\d+|-)$/.test(target));
}
