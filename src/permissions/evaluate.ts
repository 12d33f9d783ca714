import { posix } from "node:path";
import { bashRuleMatches } from "./bash-rule.js";
import { builtinDenyReason, destructiveReason, forkBombReason } from "./builtin-rules.js";
import { isMcpToolName, mcpRuleCovers } from "./mcp-rule.js";
import { type PermissionRule, parseRuleList } from "./parse-rule.js";
import { pathRuleMatches } from "./path-pattern.js";
import { CommandTooComplexError, type SimpleCommand, splitCommand } from "./split-command.js";
import type { PermissionDecision, PermissionRules, PermissionVerdict } from "./types.js";

export interface EvaluateOptions {
  /** The user's home directory, for `~/` path rules; without it they match nothing. */
  home?: string;
  /**
   * The decision when no rule has a say: by default `allow` (rudder's default
   * mode), but `ask` for MCP tools (`mcp__...`), as in Claude Code.
   */
  defaultDecision?: PermissionDecision;
}

const FILE_TOOLS = new Set(["read_file", "write_file", "edit_file", "glob"]);

/**
 * Decides whether a tool call may run. Pure: no I/O, no prompts. Order:
 * built-in deny list, user deny, user ask, user allow, built-in ask
 * (destructive commands), default. A bash command is split into its simple
 * commands: it is denied if any part is denied, asked about if any part is,
 * and allowed by allow rules only when every part is. File tools are denied
 * for paths that lexically leave the workspace (the tools also resolve
 * symlinks themselves). MCP tools are matched by `mcp__server`,
 * `mcp__server__*` and `mcp__server__tool` rules. Malformed rules are
 * skipped; report them with `validatePermissionRules`.
 */
export function evaluatePermission(
  toolName: string,
  input: Record<string, unknown>,
  rules: PermissionRules,
  workspace: string,
  options: EvaluateOptions = {},
): PermissionVerdict {
  const deny = rulesFor(parseRuleList(rules.deny), toolName);
  const ask = rulesFor(parseRuleList(rules.ask), toolName);
  const allow = rulesFor(parseRuleList(rules.allow), toolName);
  const fallback: PermissionVerdict = {
    decision: options.defaultDecision ?? (isMcpToolName(toolName) ? "ask" : "allow"),
    reason: `no permission rule matched this ${toolName} call`,
  };

  if (toolName === "bash") {
    const line = typeof input.command === "string" ? input.command : "";
    const bomb = forkBombReason(line);
    if (bomb !== undefined) return verdict("deny", `built-in deny list: ${bomb}`);
    let parts: SimpleCommand[];
    try {
      parts = splitCommand(line);
    } catch (error) {
      if (!(error instanceof CommandTooComplexError)) throw error;
      const denied = deny.find((rule) => rule.specifier === undefined);
      if (denied) return verdict("deny", `matches the deny rule ${denied.text}`);
      return verdict("ask", error.message);
    }
    for (const part of parts) {
      const reason = builtinDenyReason(part);
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
      list.find(
        (rule) => rule.specifier === undefined || parts.some((part) => matches(rule, part)),
      );
    const denied = anyPart(deny);
    if (denied) return verdict("deny", `matches the deny rule ${denied.text}`);
    const asked = anyPart(ask);
    if (asked) return verdict("ask", `matches the ask rule ${asked.text}`);
    // The user's allow rules come before the built-in ask list, which is only
    // a default: `Bash(rm:*)` means the user does not want to be asked about rm.
    const bare = allow.find((rule) => rule.specifier === undefined);
    if (bare) return verdict("allow", `matches the allow rule ${bare.text}`);
    if (parts.length > 0 && parts.every((part) => allow.some((rule) => allows(rule, part)))) {
      return verdict("allow", "every part of the command matches an allow rule");
    }
    for (const part of parts) {
      const reason = destructiveReason(part);
      if (reason !== undefined) return verdict("ask", reason);
    }
    return fallback;
  }

  if (FILE_TOOLS.has(toolName)) {
    const field = toolName === "glob" ? input.pattern : input.path;
    const path = typeof field === "string" ? field : "";
    const absolute = posix.resolve(workspace, path);
    if (leavesWorkspace(toolName, path, absolute, workspace)) {
      return verdict("deny", `${path} is outside the workspace ${workspace}`);
    }
    const matches = (rule: PermissionRule): boolean =>
      rule.specifier === undefined ||
      pathRuleMatches(rule.specifier, absolute, workspace, options.home);
    const denied = deny.find(matches);
    if (denied) return verdict("deny", `matches the deny rule ${denied.text}`);
    const asked = ask.find(matches);
    if (asked) return verdict("ask", `matches the ask rule ${asked.text}`);
    const allowed = allow.find(matches);
    if (allowed) return verdict("allow", `matches the allow rule ${allowed.text}`);
    return fallback;
  }

  const denied = deny[0];
  if (denied) return verdict("deny", `matches the deny rule ${denied.text}`);
  const asked = ask[0];
  if (asked) return verdict("ask", `matches the ask rule ${asked.text}`);
  const allowed = allow[0];
  if (allowed) return verdict("allow", `matches the allow rule ${allowed.text}`);
  return fallback;
}

function rulesFor(rules: PermissionRule[], toolName: string): PermissionRule[] {
  return rules.filter((rule) =>
    rule.mcp === undefined
      ? (rule.tools as string[]).includes(toolName)
      : mcpRuleCovers(rule.mcp, toolName),
  );
}

function leavesWorkspace(
  toolName: string,
  path: string,
  absolute: string,
  workspace: string,
): boolean {
  if (toolName === "glob" && path.split("/").includes("..")) return true;
  const relative = posix.relative(workspace, absolute);
  return relative === ".." || relative.startsWith("../") || posix.isAbsolute(relative);
}

function verdict(decision: PermissionDecision, reason: string): PermissionVerdict {
  return { decision, reason };
}
