/**
 * Claude Code's name for an MCP tool: `mcp__<server>__<tool>`, each part
 * with characters the Messages API does not allow in tool names replaced by
 * `_`. Permission rules and hook matchers use the same names.
 */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${normalizeNamePart(server)}__${normalizeNamePart(tool)}`;
}

export function normalizeNamePart(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}
