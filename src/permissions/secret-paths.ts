import { posix } from "node:path";
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

/** The secret location an absolute path lies in (or could, through a glob), or undefined. */
export function secretLocation(path: string, home: string): string | undefined {
  const relative = posix.relative(home, path);
  if (relative === "" || relative.startsWith("..") || posix.isAbsolute(relative)) return undefined;
  const segments = relative.split("/");
  for (const secret of SECRET_PATHS) {
    const parts = secret.split("/");
    if (
      parts.every(
        (part, index) => segments[index] !== undefined && segmentMatches(segments[index]!, part),
      )
    ) {
      return `~/${secret}`;
    }
  }
  return undefined;
}

/** Why a command reads or names a secret location, or undefined. */
export function secretReason(command: SimpleCommand, context: CommandContext): string | undefined {
  if (PRINTERS.has(command.argv[0] ?? "")) return undefined;
  const words = [
    ...command.argv.slice(1),
    ...command.redirects.filter((item) => item.body === undefined).map((item) => item.target),
  ];
  for (const word of words) {
    for (const candidate of [word, word.slice(word.indexOf("=") + 1), word.replace(/^@/, "")]) {
      if (/\$\{?RUDDER_HOME\b/.test(candidate)) return `${word} is rudder's data folder`;
      const path = resolvePath(candidate, context);
      const secret = path === undefined ? undefined : secretLocation(path, homeOf(context));
      if (secret !== undefined) {
        return `${word} is in ${secret}, which holds credentials${secret === "~/.rudder" ? " (rudder's token)" : ""}`;
      }
    }
  }
  return undefined;
}

/** Whether a path segment, maybe a glob, could name `name`. */
function segmentMatches(segment: string, name: string): boolean {
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
