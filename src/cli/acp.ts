import { Readable, Writable } from "node:stream";
import { AgentSideConnection, ndJsonStream } from "@agentclientprotocol/sdk";
import type { OpenSession } from "../acp/rudder-acp-agent.js";
import { RudderAcpAgent } from "../acp/rudder-acp-agent.js";
import { Session } from "../agent/session.js";
import { installSignalCleanup } from "../tools/process-groups.js";
import { withClientFiles } from "./acp-client-files.js";
import {
  createAgentSetup,
  MCP_FLAGS,
  SANDBOX_FLAGS,
  setupFlagsFromArgs,
  TOOL_NAMES_FLAGS,
  toolNamesFlag,
} from "./agent-setup.js";
import { commandArgs, type FlagSpecs, type ParsedArgs } from "./args.js";
import type { CommandIo } from "./command-io.js";
import { openStoredSession, storedSessionOptions } from "./stored-session.js";

const ACP_FLAGS: FlagSpecs = {
  model: { type: "string" },
  settings: { type: "string" },
  allowedTools: { type: "list" },
  disallowedTools: { type: "list" },
  ...MCP_FLAGS,
  ...SANDBOX_FLAGS,
  ...TOOL_NAMES_FLAGS,
};

const ACP_USAGE = `usage: rudder acp [--model M] [--settings FILE] [--allowedTools ...] [--mcp-config FILE|JSON]
                  [--tool-names claude|rudder] [--no-sandbox]
  An Agent Client Protocol agent on stdin/stdout, for editors (Zed, JetBrains, Neovim).
  Each session works in the folder the editor names; its conversation is stored like
  rudder run's, so session/load carries it on. The built-in tools have Claude Code's
  names and inputs (Bash, Read, Write, Edit, Glob) unless --tool-names rudder.
  --no-sandbox runs bash commands outside the sandbox (bubblewrap), each judged by the gate.`;

/**
 * `rudder acp`: rudder as an ACP agent over stdio. Each session gets its own setup (the
 * workspace the client names, its MCP servers merged last) and a stored transcript.
 * Resolves to the exit code when the client closes stdin.
 */
export async function acpCommandLine(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = commandArgs("acp", argv, ACP_FLAGS, ACP_USAGE, io);
  if (typeof args === "number") return args;
  const warn = (message: string): void => {
    io.stderr.write(`rudder acp: ${message}\n`);
  };
  const toolNames = toolNamesFlag(args, "claude");
  if (toolNames instanceof Error) {
    warn(toolNames.message);
    return 2;
  }
  installSignalCleanup();
  const open: OpenSession = async (request) => {
    const created = await createAgentSetup(
      { ...setupFlagsFromArgs(args), cwd: request.cwd, deferMcpStart: true, toolNames },
      io.env,
    );
    if (!created.ok) return { ok: false, error: created.error };
    const { setup } = created;
    for (const note of setup.warnings) warn(note);
    const flags: ParsedArgs = {
      flags: request.loadId === undefined ? {} : { resume: request.loadId },
      positionals: [],
      ignored: [],
    };
    const stored = openStoredSession(flags, setup.workspace, io.env, warn);
    if ("error" in stored) {
      await setup.close();
      return { ok: false, error: stored.error };
    }
    for (const note of await setup.startMcpServers(request.mcpServers, "the client's mcpServers")) {
      warn(note);
    }
    const session = new Session({
      ...setup.options,
      ...(request.clientFiles === undefined
        ? {}
        : { tools: withClientFiles(setup.options.tools, request.clientFiles) }),
      ...storedSessionOptions(stored),
      confirm: request.confirm,
      // An ACP client asks its user (session/request_permission).
      ...(setup.askBeforeDestroying ? { askBeforeDestroying: true } : {}),
    });
    return {
      ok: true,
      opened: {
        session,
        workspace: setup.workspace,
        close: () => setup.close(),
      },
    };
  };
  let agent: RudderAcpAgent | undefined;
  const stream = ndJsonStream(
    Writable.toWeb(io.stdout as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(io.stdin as Readable) as ReadableStream<Uint8Array>,
  );
  const connection = new AgentSideConnection((side) => {
    agent = new RudderAcpAgent(side, open);
    return agent;
  }, stream);
  await connection.closed;
  await agent?.closeAll();
  return 0;
}
