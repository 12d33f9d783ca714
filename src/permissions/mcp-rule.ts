/**
 * What an MCP permission rule covers, in Claude Code's forms: `mcp__server`
 * and `mcp__server__*` cover every tool of a server, `mcp__server__tool` one.
 */
export interface McpRuleTarget {
  server: string;
  /** Undefined: every tool of the server. */
  tool: string | undefined;
}

const PREFIX = "mcp__";

export function isMcpToolName(name: string): boolean {
  return name.startsWith(PREFIX);
}

/**
 * Splits `mcp__<server>[__<tool>]` at the first `__` after the server name
 * (so a tool name may itself contain `__`); `*` as the tool means every tool.
 * Undefined for names that are not MCP names.
 */
export function parseMcpName(name: string): McpRuleTarget | undefined {
  if (!isMcpToolName(name)) return undefined;
  const rest = name.slice(PREFIX.length);
  const separator = rest.indexOf("__");
  const server = separator === -1 ? rest : rest.slice(0, separator);
  if (server === "") return undefined;
  const tool = separator === -1 ? undefined : rest.slice(separator + 2);
  if (tool === "") return undefined;
  return { server, tool: tool === "*" ? undefined : tool };
}

/** Whether a rule's target covers the MCP tool of this (full) name. */
export function mcpRuleCovers(target: McpRuleTarget, toolName: string): boolean {
  const called = parseMcpName(toolName);
  if (called === undefined || called.server !== target.server) return false;
  return target.tool === undefined || target.tool === called.tool;
}
