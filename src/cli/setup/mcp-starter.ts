/**
 * Starts a setup's MCP servers once: those configured and any a host adds, their tools joined
 * to the session's and their statuses kept for `system/init`. The MCP SDK is loaded only when
 * a server is configured.
 */
import { packageVersion } from "../../gateway/http/package-info.js";
import type { McpRelay } from "../../mcp/host-relay-transport.js";
import type { McpServerStatus } from "../../mcp/mcp-servers.js";
import type { McpServerConfig } from "../../mcp/server-config.js";
import { mergeServers, parseMcpServers } from "../../mcp/server-config.js";
import { installSignalCleanup } from "../../tools/process-groups.js";
import type { AnyTool } from "../../tools/types.js";

/**
 * Claude Code's default of 10 s to start a server (`MCP_TIMEOUT`). For a call, rudder's own:
 * Claude Code waits about 28 hours, which holds a channel on a hung tool until its turn times
 * out; 2 minutes is what a bash command gets by default, and `MCP_TOOL_TIMEOUT` (or a
 * server's `timeout`) gives a slow tool more.
 */
const MCP_STARTUP_TIMEOUT_MS = 10_000;
export const MCP_TOOL_TIMEOUT_MS = 120_000;

/** A positive number of milliseconds from the environment, or the default. */
function millisecondsFrom(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return value !== undefined && Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

export interface McpStarter {
  /** The configured servers and whether each started. */
  statuses: McpServerStatus[];
  /** Starts the configured servers and `extraServers`, once; resolves with warnings. */
  start(extraServers: unknown, source: string, relay?: McpRelay): Promise<string[]>;
  /** Stops the servers started. */
  close(): Promise<void>;
}

/** `tools`: the session's tools, to which the servers' tools are added. */
export function createMcpStarter(
  configured: McpServerConfig[],
  tools: AnyTool[],
  workspace: string,
  settingsEnv: NodeJS.ProcessEnv,
): McpStarter {
  const statuses: McpServerStatus[] = [];
  let close = async (): Promise<void> => {};
  let started = false;
  const start = async (
    extraServers: unknown,
    source: string,
    relay?: McpRelay,
  ): Promise<string[]> => {
    if (started) return [`${source}: MCP servers are already started; these are ignored`];
    started = true;
    const extra = parseMcpServers(extraServers, source, settingsEnv);
    const notes = [...extra.warnings];
    const servers = mergeServers(configured, extra.servers);
    if (servers.length === 0) return notes;
    // A SIGTERM while servers start must take them down too.
    installSignalCleanup();
    const { connectMcpServers } = await import("../../mcp/mcp-servers.js");
    const connected = await connectMcpServers(servers, {
      cwd: workspace,
      env: settingsEnv,
      startupTimeoutMs: millisecondsFrom(settingsEnv.MCP_TIMEOUT, MCP_STARTUP_TIMEOUT_MS),
      toolTimeoutMs: millisecondsFrom(settingsEnv.MCP_TOOL_TIMEOUT, MCP_TOOL_TIMEOUT_MS),
      clientVersion: packageVersion(),
      ...(relay === undefined ? {} : { relay }),
    });
    tools.push(...connected.tools);
    statuses.push(...connected.statuses);
    close = connected.close;
    return [...notes, ...connected.warnings];
  };
  return { statuses, start, close: () => close() };
}
