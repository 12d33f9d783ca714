/**
 * `rudder mcp-channel-tools`: the tools an agent behind the gateway has for its conversation
 * (`send_file`), as an MCP server on stdio. Not for people to run: the gateway names it in each
 * channel agent's `--mcp-config` (both engines; the tool is `mcp__rudder__send_file`), with
 * the size cap. The workspace is the folder it is started in, the agent's. It holds no token of
 * the gateway's and reaches nothing but the workspace: the gateway sees the tool's calls in the
 * agent's stream and delivers the files itself.
 */
import { realpathSync } from "node:fs";
import { packageVersion } from "../gateway/http/package-info.js";
import { createSendFileTool } from "../tools/send-file-tool.js";
import type { CommandIo } from "./command-io.js";

/** The MCP server's name in the agents' configuration, so its tools are `mcp__rudder__...`. */
export const CHANNEL_TOOLS_SERVER = "rudder";

/** Without `--max-bytes`: 20 MB, the gateway's default attachment cap. */
const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;

export async function mcpChannelToolsCommandLine(
  argv: readonly string[],
  io: CommandIo,
): Promise<number> {
  let maxBytes = DEFAULT_MAX_BYTES;
  for (let index = 0; index < argv.length; index += 1) {
    const value = argv[index + 1];
    if (argv[index] === "--max-bytes" && value !== undefined && /^[1-9]\d*$/.test(value)) {
      maxBytes = Number(value);
      index += 1;
    } else {
      io.stderr.write(`rudder mcp-channel-tools: unknown argument ${argv[index]}\n`);
      return 2;
    }
  }
  const stopping = new AbortController();
  process.once("SIGTERM", () => stopping.abort());
  // Loaded here, not with the module: `rudder run` (which carries this command) need not load
  // the MCP server and node:readline.
  const { serveTools } = await import("../mcp/tool-server.js");
  await serveTools({
    tools: [createSendFileTool(maxBytes)],
    workspace: realpathSync(process.cwd()),
    name: CHANNEL_TOOLS_SERVER,
    version: packageVersion(),
    input: io.stdin,
    output: io.stdout,
    signal: stopping.signal,
  });
  return 0;
}
