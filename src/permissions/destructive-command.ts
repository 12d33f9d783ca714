import {
  type CommandContext,
  isOutsideWorkspace,
  isRecursive,
  isSystemPath,
  isWrite,
  operands,
} from "./command-paths.js";
import type { SimpleCommand } from "./simple-command.js";

const REMOVERS = new Set([
  "rm",
  "rmdir",
  "shred",
  "truncate",
  "unlink",
  "srm",
  "trash",
  "trash-put",
]);
const SERVICE_VERBS = /^(?:stop|disable|mask|kill|isolate|restart|reset-failed|daemon-reexec)$/;
const CONTAINER_VERBS = /^(?:rm|rmi|kill|stop|prune|down|volume|system|network)$/;

/**
 * Why `command` destroys, overwrites or gives away something and should be
 * asked about outside the sandbox, or undefined. A default: the user's allow
 * rules come first.
 */
export function destructiveReason(
  command: SimpleCommand,
  context: CommandContext,
): string | undefined {
  const [program = "", ...args] = command.argv;
  if (/[$`*?[{]/.test(program) && program !== "[" && program !== "[[") {
    return `the program (${program}) is only known when the command runs`;
  }
  if (REMOVERS.has(program)) return `${program} deletes or destroys files`;
  if (program === "mv") return "mv moves files away or overwrites them";
  if (program === "dd") return "dd overwrites what of= names";
  if (program === "ln" && args.some((arg) => /^-[a-zA-Z]*f|^--force$/.test(arg))) {
    return "ln -f replaces files";
  }
  if (program === "chmod") {
    if (isRecursive(program, args)) return "chmod -R changes permissions recursively";
    if (args.some((arg) => /777|a\+rwx|ugo\+rwx|o\+w/.test(arg)))
      return "chmod makes files writable by everyone";
  }
  if ((program === "chown" || program === "chgrp") && isRecursive(program, args)) {
    return `${program} -R changes ownership recursively`;
  }
  if (program === "crontab" && !(args.length === 1 && args[0] === "-l")) {
    return "crontab replaces or removes scheduled jobs";
  }
  if (
    (program === "systemctl" || program === "service") &&
    args.some((arg) => SERVICE_VERBS.test(arg))
  ) {
    return `${program} stops or changes a service`;
  }
  if (
    /^(?:docker|podman|nerdctl|docker-compose)$/.test(program) &&
    args.some((arg) => CONTAINER_VERBS.test(arg))
  ) {
    return `${program} removes or stops containers or their data`;
  }
  if (program === "kubectl" && args.some((arg) => /^(?:delete|drain|replace|scale)$/.test(arg))) {
    return "kubectl deletes or changes cluster resources";
  }
  if (program === "terraform" && args.includes("destroy")) return "terraform destroy";
  if (program === "git") {
    const reason = destructiveGit(args);
    if (reason !== undefined) return reason;
  }
  if (program === "find" && args.includes("-delete")) return "find -delete deletes files";
  const redirect = command.redirects.find((item) => isWrite(item.op, item.target));
  if (redirect && isSystemPath(redirect.target, context)) {
    return `output is written into the system path ${redirect.target}`;
  }
  if (redirect && isOutsideWorkspace(redirect.target, context)) {
    return `output is written to ${redirect.target}, outside the workspace`;
  }
  const targets = writtenPaths(program, args);
  const system = targets.find((target) => isSystemPath(target, context));
  if (system !== undefined) return `${program} writes into the system path ${system}`;
  const outside = targets.find((target) => isOutsideWorkspace(target, context));
  if (outside !== undefined) return `${program} writes to ${outside}, outside the workspace`;
  return undefined;
}

/** Why a git command discards changes, files, branches or history, or undefined. */
export function destructiveGit(args: string[]): string | undefined {
  let index = 0;
  while (index < args.length && args[index]!.startsWith("-")) {
    index += /^(?:-C|-c|--git-dir|--work-tree|--namespace)$/.test(args[index]!) ? 2 : 1;
  }
  const subcommand = args[index];
  const rest = args.slice(index + 1);
  const has = (pattern: RegExp) => rest.some((arg) => pattern.test(arg));
  switch (subcommand) {
    case "reset":
      return has(/^--(?:hard|merge|keep)$/) ? "git reset --hard discards changes" : undefined;
    case "clean":
      return has(/^--force$|^-[a-zA-Z]*f/) ? "git clean -f deletes untracked files" : undefined;
    case "checkout":
      return has(/^(?:--|\.|-f|--force|-B|--ours|--theirs|-p|--patch)$/)
        ? "git checkout discards changes to files"
        : undefined;
    case "restore":
      return "git restore discards changes to files";
    case "rm":
      return "git rm deletes files";
    case "switch":
      return has(/^(?:-f|--force|--discard-changes|-C|--force-create)$/)
        ? "git switch discards changes"
        : undefined;
    case "stash":
      return has(/^(?:drop|clear)$/) ? "git stash drop deletes stashed changes" : undefined;
    case "branch":
      return has(/^(?:-D|-d|--delete|-M|-m|--move|-f|--force|-C)$/)
        ? "git branch deletes, moves or overwrites branches"
        : undefined;
    case "tag":
      return has(/^(?:-d|--delete|-f|--force)$/) ? "git tag deletes or moves tags" : undefined;
    case "push":
      if (has(/^(?:--delete|-d|--prune)$/) || has(/^:/)) return "git push deletes remote branches";
      return has(/^(?:--force|--force-with-lease|--mirror)(?:=|$)|^-[a-zA-Z]*f|^\+/)
        ? "git push --force rewrites remote history"
        : undefined;
    case "reflog":
      return has(/^(?:expire|delete)$/) ? "git reflog expire deletes history" : undefined;
    case "gc":
    case "prune":
      return has(/^--prune/) || subcommand === "prune" ? "git prune deletes objects" : undefined;
    case "filter-branch":
    case "filter-repo":
    case "update-ref":
      return `git ${subcommand} rewrites history or references`;
    case "worktree":
      return has(/^(?:remove|prune)$/) ? "git worktree remove deletes a worktree" : undefined;
    default:
      return undefined;
  }
}

/** Paths a program writes to: tee's files, the destination of cp/mv/install/ln/rsync, sed -i files, dd of=. */
function writtenPaths(program: string, args: string[]): string[] {
  const files = operands(args);
  if (program === "tee" || program === "touch" || program === "mkdir") return files;
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
