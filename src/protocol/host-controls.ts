/** A model a host may pick, as `initialize` lists them (the Agent SDK's `ModelInfo`). */
export interface ModelChoice {
  value: string;
  resolvedModel: string;
  displayName: string;
  description: string;
}

/** One MCP server as `mcp_status` reports it (the Agent SDK's `McpServerStatus`). */
export interface McpServerReport {
  name: string;
  status: string;
  serverInfo?: { name: string; version: string };
  error?: string;
  config?: Record<string, unknown>;
  scope?: string;
  tools?: { name: string; description?: string }[];
}

/**
 * What the process running a stream-json session offers the host's control requests beyond
 * the session itself: the model switch, the models to choose from, the MCP servers' state.
 */
export interface HostControls {
  /** `set_model`: the model id now in use, or why the name cannot be used. */
  setModel(name: string | undefined): { ok: true; model: string } | { ok: false; error: string };
  models(): ModelChoice[];
  mcpStatus(): McpServerReport[];
}

/** For a front end given no controls: one model, no switching, servers as `system/init` lists them. */
export function fixedControls(
  model: () => string,
  servers: () => readonly { name: string; status: string }[],
): HostControls {
  return {
    setModel: () => ({ ok: false, error: "this session's model cannot be switched" }),
    models: () => [
      { value: "default", resolvedModel: model(), displayName: model(), description: "" },
    ],
    mcpStatus: () => servers().map(({ name, status }) => ({ name, status })),
  };
}
