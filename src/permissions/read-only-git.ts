import { abbreviatesOption } from "./long-option.js";

/** Options that write files or run programs; git takes any unambiguous abbreviation of them. */
const DANGEROUS_LONG_OPTIONS = [
  "output",
  "ext-diff",
  "open-files-in-pager",
  "exec",
  "upload-pack",
  "receive-pack",
  "textconv",
];

/**
 * Why a git command is not known to be read-only, or undefined when it only
 * reads the repository of the workspace. Options that point git at another
 * repository or configuration (`-C`, `-c`, `--git-dir`: their config can run
 * programs), write files (`--output`) or run programs (`grep -O`,
 * `--ext-diff`) disqualify it; `--version` only prints.
 */
export function gitNotReadOnly(args: string[]): string | undefined {
  let index = 0;
  while (index < args.length && args[index]!.startsWith("-")) {
    const option = args[index]!;
    if (
      !/^(?:--no-pager|-P|--no-optional-locks|--literal-pathspecs|--no-replace-objects|--paginate|-p|--version)$/.test(
        option,
      )
    ) {
      return `git ${option} can point git at other configuration`;
    }
    index += 1;
  }
  const subcommand = args[index];
  if (subcommand === undefined) return undefined;
  const rest = args.slice(index + 1);
  if (rest.some((arg) => /^-O/.test(arg) || abbreviatesOption(arg, DANGEROUS_LONG_OPTIONS))) {
    return `git ${subcommand} with these options can write files or run programs`;
  }
  const check = SUBCOMMANDS[subcommand];
  if (check === undefined) return `git ${subcommand} is not known to be read-only`;
  return check(rest) ? undefined : `git ${subcommand} ${rest.join(" ")} changes the repository`;
}

const always = (): boolean => true;
const firstIs =
  (verbs: RegExp) =>
  (rest: string[]): boolean =>
    rest.length === 0 || verbs.test(rest.find((arg) => !arg.startsWith("-")) ?? "list");

const LISTING =
  /^(?:-l|--list|-a|--all|-r|--remotes|--contains|--no-contains|--merged|--no-merged|--points-at)$/;
const lists =
  (changing: RegExp) =>
  (rest: string[]): boolean =>
    !rest.some((arg) => changing.test(arg)) &&
    (rest.every((arg) => arg.startsWith("-")) || rest.some((arg) => LISTING.test(arg)));

/** Read-only subcommands, with a test of their words where some forms write. */
const SUBCOMMANDS: Record<string, (rest: string[]) => boolean> = {
  status: always,
  log: always,
  diff: always,
  show: always,
  blame: always,
  annotate: always,
  shortlog: always,
  describe: always,
  grep: always,
  "rev-parse": always,
  "rev-list": always,
  "ls-files": always,
  "ls-tree": always,
  "ls-remote": always,
  "cat-file": always,
  "name-rev": always,
  "merge-base": always,
  "for-each-ref": always,
  "show-ref": (rest) => !rest.some((arg) => /^(?:-d|--delete)$/.test(arg)),
  "show-branch": always,
  "count-objects": always,
  "check-ignore": always,
  "check-attr": always,
  "diff-tree": always,
  "diff-files": always,
  "diff-index": always,
  "range-diff": always,
  whatchanged: always,
  version: always,
  var: always,
  // `git branch` and `git tag` list unless given a name without a listing option (which
  // creates one) or a changing option.
  branch: lists(
    /^(?:-[dDmMcCfu]|--delete|--move|--copy|--force|--set-upstream-to.*|--unset-upstream|--edit-description|--track.*|--no-track)$/,
  ),
  tag: lists(
    /^(?:-[dfasum]|--delete|--force|--annotate|--sign|--local-user.*|--message.*|--file.*|-F)$/,
  ),
  remote: (rest) => rest.length === 0 || /^(?:-v|--verbose|show|get-url)$/.test(rest[0]!),
  // A bare `git stash` pushes a stash: it changes the working tree.
  stash: (rest) => rest.length > 0 && firstIs(/^(?:list|show)$/)(rest),
  worktree: firstIs(/^list$/),
  reflog: firstIs(/^(?:show|list|exists)$/),
  config: (rest) =>
    rest.some((arg) => /^(?:--get|--get-all|--get-regexp|--get-urlmatch|-l|--list)$/.test(arg)) ||
    rest[0] === "get" ||
    rest[0] === "list",
  submodule: firstIs(/^(?:status|summary)$/),
  notes: firstIs(/^(?:list|show)$/),
  help: () => false,
};
