/**
 * The tools the gateway gives each channel's agent for its conversation (`send_file`): one
 * stdio MCP server for Claude Code, `rudder mcp-channel-tools`, named `rudder` in its
 * `--mcp-config` (so it calls the tool `mcp__rudder__send_file`; rudder's own agents have the
 * same tool built in as `send_file`, `--send-file-tool`) and allowed
 * without asking (`--allowedTools`): sending a file of its own workspace to the conversation
 * it is in asks nobody's permission, as answering does not. The server gets no token and no
 * address of the gateway (the agents must not reach its HTTP API); the gateway sees its calls
 * in the agent's stream (media/sent-files.ts).
 */

/** How to start the channel tools' MCP server (`rudder serve`: node, rudder's cli.js, the subcommand). */
export interface ChannelToolsServer {
  command: string;
  args: string[];
}

/** The server's name in the agents' MCP configuration. */
export const CHANNEL_TOOLS_NAME = "rudder";

/** `send_file` as Claude Code names it, through the server. */
export const SEND_FILE_TOOL_NAME = `mcp__${CHANNEL_TOOLS_NAME}__send_file`;

/**
 * A rudder agent's flags for the tool: rudder has `send_file` built in (the tool's own name),
 * allowed without asking as the server's is.
 */
export function rudderSendFileArgs(maxBytes: number): string[] {
  return ["--send-file-tool", String(maxBytes), "--allowedTools", "send_file"];
}

/** The agent's flags for the server, with the largest file it may send. */
export function channelToolArgs(server: ChannelToolsServer, maxBytes: number): string[] {
  const config = {
    mcpServers: {
      [CHANNEL_TOOLS_NAME]: {
        type: "stdio",
        command: server.command,
        args: [...server.args, "--max-bytes", String(maxBytes)],
      },
    },
  };
  return ["--mcp-config", JSON.stringify(config), "--allowedTools", SEND_FILE_TOOL_NAME];
}
