/**
 * Commands that delete or overwrite a person's work in the workspace: asked about even in
 * the sandbox when a person can answer (`sandbox.askBeforeDestroying`), because the sandbox
 * protects the machine and only a person protects their own work. Writing files (`>`, `cp`,
 * the file tools) is how an agent makes work and is not asked about; git keeps what was
 * committed, so what is asked about is what git cannot give back.
 */
import { operands } from "./command-paths.js";
import { destructiveGit } from "./destructive-command.js";
import type { SimpleCommand } from "./simple-command.js";

const REMOVERS = new Set([
  "rm",
  "rmdir",
  "unlink",
  "shred",
  "truncate",
  "srm",
  "trash",
  "trash-put",
]);

/** Why `command` destroys work, or undefined. */
export function destroysWorkReason(command: SimpleCommand): string | undefined {
  const [program = "", ...args] = command.argv;
  if (REMOVERS.has(program)) return `${program} deletes files`;
  if (
    program === "mv" &&
    !args.some((arg) => /^(?:-[a-zA-Z]*n|--no-clobber|--update=none)$/.test(arg))
  ) {
    return operands(args).length >= 2 ? "mv can move a file over another" : undefined;
  }
  if (program === "find" && args.includes("-delete")) return "find -delete deletes files";
  if (program === "rsync" && args.some((arg) => arg.startsWith("--delete"))) {
    return "rsync --delete deletes files";
  }
  if (program === "git") {
    const unstagesOnly =
      args.includes("restore") &&
      args.some((arg) => /^(?:--staged|-S)$/.test(arg)) &&
      !args.some((arg) => /^(?:--worktree|-W)$/.test(arg));
    if (!unstagesOnly) return destructiveGit(args);
  }
  return undefined;
}
