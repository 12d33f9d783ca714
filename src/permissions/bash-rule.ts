import { splitCommand } from "./split-command.js";

/**
 * Whether a Bash rule's specifier matches one simple command, given as its
 * words joined by single spaces (so spacing and quoting do not matter), in
 * Claude Code's semantics:
 * - `npm run test:*` (legacy prefix): the command is `npm run test` or starts
 *   with it followed by a non-word character (`npm run test:unit`, `npm run
 *   test -- x`), never `npm run tests`;
 * - `git commit *`: `*` matches any text; a single trailing ` *` is optional
 *   and keeps the word boundary (`ls *` matches `ls` and `ls -la`, not `lsof`);
 * - anything else must equal the command.
 */
export function bashRuleMatches(specifier: string, command: string): boolean {
  if (specifier.endsWith(":*")) {
    const prefix = normalizeWords(specifier.slice(0, -2));
    if (command === prefix) return true;
    return command.startsWith(prefix) && /^[^A-Za-z0-9_.-]/.test(command.slice(prefix.length));
  }
  if (!specifier.includes("*")) return command === normalizeWords(specifier);
  const stars = specifier.split("*").length - 1;
  const optionalTail = stars === 1 && specifier.endsWith(" *");
  const body = optionalTail ? specifier.slice(0, -2) : specifier;
  const source = body
    .split("*")
    .map((part) => part.replace(/\s+/g, " ").replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}${optionalTail ? "(?: .*)?" : ""}$`, "s").test(command);
}

/** A specifier without wildcards, read as shell words: quotes removed, spacing collapsed. */
function normalizeWords(text: string): string {
  const commands = splitCommand(text);
  if (commands.length !== 1) return text.trim().replace(/\s+/g, " ");
  const [program, ...rest] = commands[0]!.argv;
  return [commands[0]!.programAsWritten ?? program, ...rest].join(" ");
}
