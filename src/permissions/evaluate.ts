import { posix } from "node:path";
import { evaluateBash } from "./evaluate-bash.js";
import { isMcpToolName, mcpRuleCovers } from "./mcp-rule.js";
import { type PermissionRule, parseRuleList } from "./parse-rule.js";
import { pathRuleMatches } from "./path-pattern.js";
import { protectedConfigPath } from "./protected-paths.js";
import { secretLocation } from "./secret-paths.js";
import type { PermissionDecision, PermissionRules, PermissionVerdict } from "./types.js";

export interface EvaluateOptions {
  /** The user's home directory, for `~/` path rules; without it they match nothing. */
  home?: string;
  /**
   * The decision when no rule has a say: by default `allow` (rudder's default
   * mode), but `ask` for MCP tools (`mcp__...`), as in Claude Code.
   */
  defaultDecision?: PermissionDecision;
  /**
   * Whether bash commands run in the OS sandbox. `true`: they run without
   * asking, except for the deny list and the user's deny and ask rules.
   * `false`: only commands known to be read-only, and those allow rules cover,
   * run without asking. Undefined: rudder's earlier default (everything but the
   * deny list, destructive commands and code the gate cannot read), for callers
   * that have not chosen yet.
   */
  sandboxed?: boolean;
  /**
   * A person can answer this session's questions and has not opted out
   * (`sandbox.askBeforeDestroying: false`): commands that delete or overwrite
   * work ask even in the sandbox. Headless, nobody can answer: leave it unset.
   */
  askBeforeDestroying?: boolean;
}

const FILE_TOOLS = new Set(["read_file", "write_file", "edit_file", "glob"]);

/**
 * Decides whether a tool call may run. Pure: no I/O, no prompts; a bash call
 * needs the grammar loaded first (`await loadBashParser()`, once). Order:
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
    return evaluateBash(
      line,
      { deny, ask, allow },
      {
        workspace,
        home: options.home,
        sandboxed: options.sandboxed,
        ...(options.askBeforeDestroying === true ? { askBeforeDestroying: true } : {}),
        defaultDecision: options.defaultDecision,
      },
    );
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
    const guarded = guardedPath(toolName, absolute, workspace, options.home);
    const named = (rule: PermissionRule): boolean =>
      guarded !== undefined &&
      rule.specifier?.toLowerCase().includes(guarded.name) === true &&
      matches(rule);
    if (guarded !== undefined && !allow.some(named)) {
      return { decision: "ask", reason: guarded.reason, guarded: true };
    }
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

/**
 * A path inside the workspace that is still asked about: a protected
 * configuration path for writes, a secret location of the home for any file
 * tool. An allow rule whose pattern names it lifts the question.
 */
function guardedPath(
  toolName: string,
  absolute: string,
  workspace: string,
  home: string | undefined,
): { name: string; reason: string } | undefined {
  if (toolName === "write_file" || toolName === "edit_file") {
    const name = protectedConfigPath(posix.relative(workspace, absolute));
    if (name !== undefined) {
      return {
        name,
        reason: `${name} configures what runs outside the agent's control (hooks, MCP servers, git); writing it needs confirmation`,
      };
    }
  }
  const secret = home === undefined ? undefined : secretLocation(absolute, home);
  if (secret === undefined) return undefined;
  return {
    name: secret.slice(2),
    reason: `${secret} holds credentials; using it needs confirmation`,
  };
}

function verdict(decision: PermissionDecision, reason: string): PermissionVerdict {
  return { decision, reason };
}
