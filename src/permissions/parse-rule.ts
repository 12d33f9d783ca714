import { type McpRuleTarget, parseMcpName } from "./mcp-rule.js";
import type { PermissionRules } from "./types.js";

/** rudder's tool names, which rules resolve to. */
export type RuleTool = "bash" | "read_file" | "write_file" | "edit_file" | "glob";

export interface PermissionRule {
  /** The rule as written, for reasons shown to people. */
  text: string;
  /** The rudder tools it covers; empty for tools rudder does not have (WebFetch, mcp__...). */
  tools: RuleTool[];
  /** Inside the parentheses; undefined for a bare tool name (or `Tool(*)`): every call. */
  specifier: string | undefined;
  /** For `mcp__server`, `mcp__server__*` and `mcp__server__tool`: what they cover. */
  mcp?: McpRuleTarget;
}

export type ParsedRule = { ok: true; rule: PermissionRule } | { ok: false; error: string };

/**
 * Claude Code's tool names mean rudder's equivalents, so existing settings work
 * unchanged. As in Claude Code, `Edit` covers every tool that edits files
 * (here edit_file and write_file), and `Read(path)` is applied to glob too; a bare
 * `Read` (`--disallowedTools Read`) means the Read tool alone, so searching still works.
 */
const TOOL_ALIASES: Record<string, RuleTool[]> = {
  Bash: ["bash"],
  bash: ["bash"],
  Read: ["read_file", "glob"],
  read_file: ["read_file"],
  Write: ["write_file"],
  write_file: ["write_file"],
  Edit: ["edit_file", "write_file"],
  MultiEdit: ["edit_file", "write_file"],
  edit_file: ["edit_file"],
  Glob: ["glob"],
  glob: ["glob"],
};

/** A tool name, or Claude Code's wildcard for every tool of an MCP server (`mcp__server__*`). */
const TOOL_NAME = /^(?:[A-Za-z_][A-Za-z0-9_-]*|mcp__[A-Za-z0-9_-]+__\*)$/;

/**
 * Parses one rule in Claude Code's syntax: `Tool` or `Tool(specifier)`, e.g.
 * `Bash(npm run test:*)`, `Read(./secrets/**)`, `Edit`. A malformed rule is
 * reported, not thrown.
 */
export function parsePermissionRule(text: string): ParsedRule {
  const rule = text.trim();
  if (rule.length === 0) return { ok: false, error: "The rule is empty." };
  const open = rule.indexOf("(");
  const name = open === -1 ? rule : rule.slice(0, open);
  if (!TOOL_NAME.test(name)) {
    return {
      ok: false,
      error: `"${text}" is not a rule: expected a tool name such as Bash or Read, optionally followed by (specifier).`,
    };
  }
  const tools = TOOL_ALIASES[name] ?? [];
  const mcp = parseMcpName(name);
  if (mcp !== undefined) {
    if (open !== -1 && rule !== `${name}(*)`) {
      return { ok: false, error: `"${text}": MCP rules take no specifier; write ${name} alone.` };
    }
    return { ok: true, rule: { text: rule, tools, specifier: undefined, mcp } };
  }
  if (open === -1) {
    const named = name === "Read" ? (["read_file"] as RuleTool[]) : tools;
    return { ok: true, rule: { text: rule, tools: named, specifier: undefined } };
  }
  if (!rule.endsWith(")")) {
    return { ok: false, error: `"${text}" lacks its closing parenthesis (or has text after it).` };
  }
  const specifier = rule.slice(open + 1, -1).trim();
  if (specifier.length === 0) {
    return {
      ok: false,
      error: `"${text}" has an empty specifier; write ${name} alone to match every call.`,
    };
  }
  if (specifier === "*") return { ok: true, rule: { text: rule, tools, specifier: undefined } };
  if (tools.includes("bash")) {
    const legacy = specifier.indexOf(":*");
    if (legacy !== -1 && legacy !== specifier.length - 2) {
      return { ok: false, error: `"${text}": the prefix wildcard :* may only end a Bash rule.` };
    }
  }
  return { ok: true, rule: { text: rule, tools, specifier } };
}

/** The parsed rules of a list, skipping malformed ones (report those with `validatePermissionRules`). */
export function parseRuleList(texts: string[]): PermissionRule[] {
  const rules: PermissionRule[] = [];
  for (const text of texts) {
    const parsed = parsePermissionRule(text);
    if (parsed.ok) rules.push(parsed.rule);
  }
  return rules;
}

/** One message per malformed rule, naming the list it is in. */
export function validatePermissionRules(rules: PermissionRules): string[] {
  const errors: string[] = [];
  for (const list of ["deny", "ask", "allow"] as const) {
    for (const text of rules[list]) {
      const parsed = parsePermissionRule(text);
      if (!parsed.ok) errors.push(`permissions.${list}: ${parsed.error}`);
    }
  }
  return errors;
}

/**
 * Splits `--allowedTools` / `--disallowedTools` values the way Claude Code
 * accepts them: comma- or space-separated, where spaces and commas inside
 * parentheses belong to the rule (`"Bash(git log:*) Read,Edit"`).
 */
export function splitToolList(value: string): string[] {
  const rules: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of value) {
    if (char === "(") depth += 1;
    if (char === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === "," || /\s/.test(char))) {
      if (current.trim().length > 0) rules.push(current.trim());
      current = "";
    } else {
      current += char;
    }
  }
  if (current.trim().length > 0) rules.push(current.trim());
  return rules;
}

/** Rules from the CLI flags: allowed tools become `allow` rules, disallowed ones `deny`. */
export function rulesFromToolLists(
  allowedTools: string[],
  disallowedTools: string[],
): PermissionRules {
  return {
    allow: allowedTools.flatMap(splitToolList),
    ask: [],
    deny: disallowedTools.flatMap(splitToolList),
  };
}
