import { posix } from "node:path";
import { bashRuleMatches } from "./bash-rule.js";
import { type CommandContext, homeOf, resolvePath } from "./command-paths.js";
import { builtinDenyReason, forkBombReason } from "./deny-list.js";
import { destroysWorkReason } from "./destroys-work.js";
import { destructiveReason } from "./destructive-command.js";
import type { PermissionRule } from "./parse-rule.js";
import { inlineCodeReason, notReadOnlyReason } from "./read-only-command.js";
import { secretReason } from "./secret-paths.js";
import type { SimpleCommand } from "./simple-command.js";
import { CommandTooComplexError, splitCommand } from "./split-command.js";
import type { PermissionDecision, PermissionVerdict } from "./types.js";
import { notUnderstoodReason } from "./understood-command.js";

export interface BashRules {
  deny: PermissionRule[];
  ask: PermissionRule[];
  allow: PermissionRule[];
}

export interface BashPosture {
  workspace: string;
  home: string | undefined;
  /** true: the OS sandbox confines the command; false: it does not; undefined: the old default. */
  sandboxed: boolean | undefined;
  defaultDecision: PermissionDecision | undefined;
  /**
   * A person can answer and has not opted out (`sandbox.askBeforeDestroying`): in the
   * sandbox too, commands that delete or overwrite work ask.
   */
  askBeforeDestroying?: boolean;
}

/**
 * The verdict on one bash command line. Order: the built-in deny list, the
 * user's deny and ask rules; then, in the sandbox, allow (but commands that
 * destroy work ask when `askBeforeDestroying`). Outside it: reading a secret
 * location asks, a bare allow rule allows, and (when `sandboxed` is false) a
 * command with a word the gate does not understand asks; then the user's allow
 * rules allow, destructive commands and code the gate cannot read ask, and
 * (when `sandboxed` is false) anything not known to be read-only asks. A line the
 * grammar cannot read asks.
 */
export function evaluateBash(
  line: string,
  rules: BashRules,
  posture: BashPosture,
): PermissionVerdict {
  const bomb = forkBombReason(line);
  if (bomb !== undefined) return verdict("deny", `built-in deny list: ${bomb}`);
  let parts: SimpleCommand[];
  try {
    parts = splitCommand(line);
  } catch (error) {
    if (!(error instanceof CommandTooComplexError)) throw error;
    const denied = rules.deny.find((rule) => rule.specifier === undefined);
    if (denied) return verdict("deny", `matches the deny rule ${denied.text}`);
    return verdict("ask", error.message);
  }
  const contexts = commandContexts(parts, posture);
  for (const [index, part] of parts.entries()) {
    const reason = builtinDenyReason(part, contexts[index]!);
    if (reason !== undefined) return verdict("deny", `built-in deny list: ${reason}`);
  }
  // Deny and ask rules match a program by name or as written (`rm` covers `/bin/rm`);
  // allow rules only as written, so `Bash(rm:*)` does not allow some `./rm`.
  const written = (part: SimpleCommand): string =>
    [part.programAsWritten ?? part.argv[0], ...part.argv.slice(1)].join(" ");
  const matches = (rule: PermissionRule, part: SimpleCommand): boolean =>
    rule.specifier === undefined ||
    bashRuleMatches(rule.specifier, part.argv.join(" ")) ||
    bashRuleMatches(rule.specifier, written(part));
  const allows = (rule: PermissionRule, part: SimpleCommand): boolean =>
    rule.specifier === undefined || bashRuleMatches(rule.specifier, written(part));
  const anyPart = (list: PermissionRule[]): PermissionRule | undefined =>
    list.find((rule) => rule.specifier === undefined || parts.some((part) => matches(rule, part)));
  const denied = anyPart(rules.deny);
  if (denied) return verdict("deny", `matches the deny rule ${denied.text}`);
  const asked = anyPart(rules.ask);
  if (asked) return verdict("ask", `matches the ask rule ${asked.text}`);
  const first = (judge: (part: SimpleCommand, context: CommandContext) => string | undefined) => {
    for (const [index, part] of parts.entries()) {
      const reason = judge(part, contexts[index]!);
      if (reason !== undefined) return reason;
    }
    return undefined;
  };
  if (posture.sandboxed === true) {
    const destroys = posture.askBeforeDestroying === true ? first(destroysWorkReason) : undefined;
    if (destroys !== undefined) {
      return verdict("ask", `${destroys}; work is not destroyed without a person's yes`);
    }
    return verdict("allow", "bash runs in the sandbox");
  }
  const secret = first(secretReason);
  if (secret !== undefined) return verdict("ask", secret);
  // The user's allow rules come before the built-in ask list, which is only
  // a default: `Bash(rm:*)` means the user does not want to be asked about rm.
  const bare = rules.allow.find((rule) => rule.specifier === undefined);
  if (bare) return verdict("allow", `matches the allow rule ${bare.text}`);
  if (posture.sandboxed === false) {
    const unknown = first(notUnderstoodReason);
    if (unknown !== undefined) {
      return verdict(
        "ask",
        `${unknown}; without the sandbox, a command runs unasked only when every word of it is understood`,
      );
    }
  }
  // Parts known to be read-only need no rule of their own (`npm test && git status`).
  const covered = parts.filter((part) => rules.allow.some((rule) => allows(rule, part)));
  if (
    covered.length > 0 &&
    parts.every((part) => covered.includes(part) || notReadOnlyReason(part) === undefined)
  ) {
    return verdict("allow", "every part of the command matches an allow rule or only reads");
  }
  const destructive = first(destructiveReason);
  if (destructive !== undefined) return verdict("ask", destructive);
  const opaque = first((part) =>
    part.argv[0] === undefined
      ? undefined
      : inlineCodeReason(part.argv[0], part.argv.slice(1), part),
  );
  if (opaque !== undefined) return verdict("ask", opaque);
  if (posture.sandboxed === false) {
    const unknown = first(notReadOnlyReason);
    if (unknown === undefined) return verdict("allow", "every part of the command only reads");
    return verdict(
      posture.defaultDecision ?? "ask",
      `${unknown}; without the sandbox, only read-only commands run without asking`,
    );
  }
  return verdict(posture.defaultDecision ?? "allow", "no permission rule matched this bash call");
}

/** Where each part runs: the workspace, then wherever `cd`/`pushd` went, unknown after `cd $X`. */
function commandContexts(parts: SimpleCommand[], posture: BashPosture): CommandContext[] {
  let cwd: string | undefined = posture.workspace;
  return parts.map((part) => {
    const context: CommandContext = { workspace: posture.workspace, cwd, home: posture.home };
    const [program, ...words] = part.argv;
    const target = words.find((word) => !word.startsWith("-") || word === "-");
    if (program === "cd" || program === "pushd") {
      if (target === undefined) cwd = homeOf(context);
      else if (target === "-") cwd = undefined;
      else cwd = resolvePath(target, context) ?? undefined;
      if (cwd !== undefined) cwd = posix.normalize(cwd);
    }
    return context;
  });
}

function verdict(decision: PermissionDecision, reason: string): PermissionVerdict {
  return { decision, reason };
}
