import type { AnyTool } from "../tools/types.js";
import {
  type ConnectOptions,
  connectMcpServer,
  lastLine,
  type McpConnection,
} from "./mcp-connection.js";
import { createMcpTool } from "./mcp-tool.js";
import type { McpServerConfig } from "./server-config.js";

/** A server as `system/init` and `mcp_status` list it, in Claude Code's words. */
export interface McpServerStatus {
  name: string;
  status: "connected" | "failed";
  /** How it is started (`mcp_status`'s `config`). */
  config: { type: "stdio"; command: string; args: string[] } | { type: "sdk"; name: string };
  /** Why it failed to start. */
  error?: string;
  /** What the server said it is, once connected. */
  serverInfo?: { name: string; version: string };
  /** Its tools, by the server's own names, once connected. */
  tools?: { name: string; description?: string }[];
}

/** The MCP servers of a session. This module loads the MCP SDK: import it lazily. */
export interface McpServers {
  /** Every connected server's tools, as kernel tools (`mcp__<server>__<tool>`). */
  tools: AnyTool[];
  statuses: McpServerStatus[];
  /** One line per server that failed to start, or tool left out. */
  warnings: string[];
  /** The running servers, e.g. for their pids. */
  connections: McpConnection[];
  /** Stops every server (each whole process group). Never rejects. */
  close(): Promise<void>;
}

function configOf(config: McpServerConfig): McpServerStatus["config"] {
  return config.type === "sdk"
    ? { type: "sdk", name: config.name }
    : { type: "stdio", command: config.command, args: [...config.args] };
}

/**
 * Starts every configured server at once and waits for all of them (each
 * within the startup timeout). A server that fails is a warning and has no
 * tools; it never fails the whole. Tool names that clash (after the
 * characters the API forbids are replaced) keep the first.
 */
export async function connectMcpServers(
  configs: readonly McpServerConfig[],
  options: ConnectOptions,
): Promise<McpServers> {
  const results = await Promise.all(configs.map((config) => connectMcpServer(config, options)));
  const tools: AnyTool[] = [];
  const statuses: McpServerStatus[] = [];
  const warnings: string[] = [];
  const connections: McpConnection[] = [];
  const names = new Set<string>();
  for (const [index, result] of results.entries()) {
    const config = configs[index] as McpServerConfig;
    if (!result.ok) {
      const tail = lastLine(result.stderrTail);
      warnings.push(
        `MCP server "${config.name}" (${config.source}) failed: ${result.error}${tail === "" ? "" : ` (stderr: ${tail})`}; its tools are absent`,
      );
      statuses.push({
        name: config.name,
        status: "failed",
        config: configOf(config),
        error: result.error,
      });
      continue;
    }
    const { connection } = result;
    connections.push(connection);
    statuses.push({
      name: config.name,
      status: "connected",
      config: configOf(config),
      ...(connection.serverInfo === undefined ? {} : { serverInfo: connection.serverInfo }),
      tools: connection.tools.map(({ name, description }) => ({
        name,
        ...(description === undefined ? {} : { description }),
      })),
    });
    for (const description of connection.tools) {
      const tool = createMcpTool(config.name, description, (name, input, signal) =>
        connection.call(name, input, signal),
      );
      if (names.has(tool.name)) {
        warnings.push(`MCP tool ${tool.name} is defined twice; the second is left out`);
        continue;
      }
      names.add(tool.name);
      tools.push(tool);
    }
  }
  return {
    tools,
    statuses,
    warnings,
    connections,
    close: async () => {
      await Promise.all(connections.map((connection) => connection.close()));
    },
  };
}
