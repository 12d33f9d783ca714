import { type CommandContext, homeOf, resolvePath } from "./command-paths.js";
import type { SimpleCommand } from "./simple-command.js";

/**
 * Places in the home that hold credentials: rudder's own data folder (the
 * gateway's token, transcripts), Claude Code's, keys and cloud logins. The
 * sandbox hides them; without it, a command or file tool that names one is
 * asked about, so that an agent cannot read the token that approves its own
 * permission requests.
 */
export const SECRET_PATHS = [
  ".rudder",
  ".claude",
  ".ssh",
  ".aws",
  ".gnupg",
  ".config/gh",
  ".config/gcloud",
  ".azure",
  ".kube",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".password-store",
  ".vault-token",
];

/** Programs that only print their words; naming a path is not reading it. */
const PRINTERS = new Set(["echo", "printf", "true", "false", ":"]);

/** The secret location an absolute path lies in (or could, through a glob or a variable), or undefined. */
export function secretLocation(path: string, home: string): string | undefined {
  const segments = path.split("/").filter((segment) => segment !== "");
  const homeSegments = home.split("/").filter((segment) => segment !== "");
  for (const secret of SECRET_PATHS) {
    const target = [...homeSegments, ...secret.split("/")];
    if (
      segments.length >= target.length &&
      target.every((part, index) => segmentMatches(segments[index]!, part))
    ) {
      return `~/${secret}`;
    }
  }
  return undefined;
}

/** What a process's folder under /proc gives away: its environment (the API key), memory, files. */
const PROCESS_SECRETS =
  /^\/proc\/[^/]+\/(?:task\/[^/]+\/)?(?:environ|mem|root|cwd|fd|map_files)(?:\/|$)/;
/** Programs that read every file under a folder they are given (`grep -r X ~`). */
const RECURSIVE_READERS = /^(?:rg|ag|ack|ugrep|rgrep)$/;

/** Why a command reads or names a secret location, or undefined. */
export function secretReason(command: SimpleCommand, context: CommandContext): string | undefined {
  const program = command.argv[0] ?? "";
  if (PRINTERS.has(program)) return undefined;
  const recursive =
    RECURSIVE_READERS.test(program) ||
    (/^[ez]?grep$|^[ef]grep$/.test(program) &&
      command.argv.some((word) =>
        /^-[a-zA-Z]*[rR]|^--(?:recursive|dereference-recursive|directories=recurse)$/.test(word),
      ));
  const words = [
    ...command.argv.slice(1),
    ...command.redirects.filter((item) => item.body === undefined).map((item) => item.target),
  ];
  for (const word of words) {
    for (const candidate of [word, word.slice(word.indexOf("=") + 1), word.replace(/^@/, "")]) {
      if (/\$\{?RUDDER_HOME\b/.test(candidate)) return `${word} is rudder's data folder`;
      const path = resolvePath(candidate, context);
      if (path === undefined) continue;
      if (PROCESS_SECRETS.test(path)) return `${word} gives away a process's environment or files`;
      const secret = secretLocation(path, homeOf(context));
      if (secret !== undefined) {
        return `${word} is in ${secret}, which holds credentials${secret === "~/.rudder" ? " (rudder's token)" : ""}`;
      }
      const home = homeOf(context);
      if (recursive && (home === path || home.startsWith(`${path === "/" ? "" : path}/`))) {
        return `${program} reads every file under ${word}, where credentials are kept`;
      }
    }
  }
  return undefined;
}

/** Whether a path segment, maybe a glob or holding a variable, could name `name`. */
function segmentMatches(segment: string, name: string): boolean {
  if (/\$/.test(segment)) return true;
  if (!/[*?[]/.test(segment)) return segment === name;
  const source = segment
    .replace(/[.+^${}()|\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  try {
    return new RegExp(`^${source}$`).test(name);
  } catch {
    return true;
  }
}
