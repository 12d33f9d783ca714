import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, ListRootsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ToolResult } from "../tools/types.js";
import { formatCallResult, type McpCallResult } from "./format-result.js";
import { HostRelayTransport, type McpRelay } from "./host-relay-transport.js";
import type { McpToolDescription } from "./mcp-tool.js";
import { ProcessTransport } from "./process-transport.js";
import type { McpServerConfig } from "./server-config.js";

/** What a connection needs of its transport beyond MCP's: how its server is doing. */
interface ServerTransport extends Transport {
  readonly pid: number | undefined;
  readonly stderrTail: string;
  /** How the server ended, or undefined while it runs. */
  readonly exitDescription: string | undefined;
}

export interface ConnectOptions {
  /** Where the server runs. */
  cwd: string;
  /** The environment it inherits; the server's own `env` is laid over it. */
  env: NodeJS.ProcessEnv;
  /** How long starting, initializing and listing tools may take together. */
  startupTimeoutMs: number;
  /** How long one tool call may take, unless the server's configuration says. */
  toolTimeoutMs: number;
  /** rudder's version, sent as the client's. */
  clientVersion: string;
  /** Reaches the host's in-process (`type: "sdk"`) servers; without it they cannot start. */
  relay?: McpRelay;
}

export type ConnectResult =
  | { ok: true; connection: McpConnection }
  | { ok: false; error: string; stderrTail: string };

/** The last non-empty line of a server's stderr, for one-line messages. */
export function lastLine(text: string): string {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  return lines.at(-1)?.trim() ?? "";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A server started and initialized: its client, its transport and the tools it listed. */
interface OpenedServer {
  client: Client;
  transport: ServerTransport;
  tools: McpToolDescription[];
}

type OpenResult =
  | { ok: true; server: OpenedServer }
  | { ok: false; error: string; stderrTail: string };

/**
 * One MCP server of a session: its tools and a way to call them. Calls never reject: a server
 * that timed out or answered with an error gives an error result naming the server. A server
 * that died is started again on the next call to it (its tools as first listed), and that
 * call's result begins with a note saying so, since whatever the server held is gone.
 */
export class McpConnection {
  readonly config: McpServerConfig;
  readonly tools: McpToolDescription[];
  readonly #options: ConnectOptions;
  readonly #toolTimeoutMs: number;
  #server: OpenedServer;
  /** The restart under way, shared by the calls that found the server dead. */
  #restarting: Promise<OpenResult> | undefined;
  #closed = false;

  constructor(config: McpServerConfig, server: OpenedServer, options: ConnectOptions) {
    this.config = config;
    this.#server = server;
    this.#options = options;
    this.tools = server.tools;
    this.#toolTimeoutMs = config.toolTimeoutMs ?? options.toolTimeoutMs;
  }

  /** The name and version the server gave in its `initialize` answer. */
  get serverInfo(): { name: string; version: string } | undefined {
    const info = this.#server.client.getServerVersion();
    return info === undefined ? undefined : { name: info.name, version: info.version };
  }

  get pid(): number | undefined {
    return this.#server.transport.pid;
  }

  /** Calls a tool by the server's own name for it. */
  async call(
    toolName: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    const gone = this.#server.transport.exitDescription;
    let note = "";
    if (gone !== undefined) {
      const restarted = await this.#restart();
      if (!restarted.ok) {
        return this.#deadResult(gone, `; starting it again failed: ${restarted.error}`);
      }
      note = `Note: MCP server "${this.config.name}" had stopped (it ${gone}) and was started again for this call; whatever it held from before is gone.\n`;
    }
    const result = await this.#callOnce(this.#server, toolName, input, signal);
    return note === "" ? result : withNote(result, note);
  }

  /** Stops the server: its whole process group is killed. No restart follows. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#restarting?.catch(() => undefined);
    await closeServer(this.#server);
  }

  async #callOnce(
    server: OpenedServer,
    toolName: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    const name = this.config.name;
    try {
      const result = await server.client.callTool({ name: toolName, arguments: input }, undefined, {
        signal,
        timeout: this.#toolTimeoutMs,
      });
      // The union's other member is the 2024-10 protocol's `toolResult`, which no current server sends.
      return formatCallResult(result as McpCallResult, { serverName: name });
    } catch (error) {
      const ended = server.transport.exitDescription;
      if (ended !== undefined)
        return this.#deadResult(ended, "; it will be started again on its next use");
      if (signal.aborted) {
        return { content: `Error: the call to ${toolName} was aborted`, isError: true };
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        const seconds = Math.round(this.#toolTimeoutMs / 100) / 10;
        return {
          content: `Error: MCP server "${name}" did not answer the call to ${toolName} within ${seconds} s, so rudder stopped waiting (MCP_TOOL_TIMEOUT, or the server's "timeout", sets the limit)`,
          isError: true,
        };
      }
      return {
        content: `Error: MCP server "${name}" failed the call to ${toolName}: ${messageOf(error)}`,
        isError: true,
      };
    }
  }

  #restart(): Promise<OpenResult> {
    if (this.#closed) {
      return Promise.resolve({ ok: false, error: "the session is ending", stderrTail: "" });
    }
    this.#restarting ??= (async () => {
      await closeServer(this.#server);
      const opened = await openServer(this.config, this.#options);
      if (opened.ok) {
        if (this.#closed) await closeServer(opened.server);
        else this.#server = opened.server;
      }
      return opened;
    })().finally(() => {
      this.#restarting = undefined;
    });
    return this.#restarting;
  }

  #deadResult(how: string, after: string): ToolResult {
    const tail = lastLine(this.#server.transport.stderrTail);
    return {
      content: `Error: MCP server "${this.config.name}" is not running (it ${how})${tail === "" ? "" : `; its last stderr line: ${tail}`}${after}`,
      isError: true,
    };
  }
}

/** `result` with `note` before its text (and before its parts, when it has images). */
function withNote(result: ToolResult, note: string): ToolResult {
  const noted: ToolResult = { ...result, content: `${note}${result.content}` };
  if (result.parts !== undefined) noted.parts = [{ type: "text", text: note }, ...result.parts];
  return noted;
}

async function closeServer(server: OpenedServer): Promise<void> {
  await server.client.close().catch(() => undefined);
  await server.transport.close();
}

/**
 * Starts a server, initializes it and lists its tools, all within the
 * startup timeout. A failure kills what was started and is returned, never
 * thrown.
 */
export async function connectMcpServer(
  config: McpServerConfig,
  options: ConnectOptions,
): Promise<ConnectResult> {
  const opened = await openServer(config, options);
  return opened.ok
    ? { ok: true, connection: new McpConnection(config, opened.server, options) }
    : opened;
}

/** `connectMcpServer`'s work, which a restart does again: never rejects. */
async function openServer(config: McpServerConfig, options: ConnectOptions): Promise<OpenResult> {
  let transport: ServerTransport;
  if (config.type === "sdk") {
    if (options.relay === undefined) {
      return {
        ok: false,
        error: "is an in-process SDK server, which only a host speaking stream-json can run",
        stderrTail: "",
      };
    }
    transport = new HostRelayTransport(config.name, options.relay);
  } else {
    transport = new ProcessTransport({
      command: config.command,
      args: config.args,
      env: { ...options.env, ...config.env },
      cwd: options.cwd,
    });
  }
  // The workspace is the one root, as servers that ask for roots (filesystem, everything) expect.
  const client = new Client(
    { name: "rudder", version: options.clientVersion },
    { capabilities: { roots: { listChanged: false } } },
  );
  const roots = [{ uri: pathToFileURL(options.cwd).href, name: basename(options.cwd) }];
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
  const signal = AbortSignal.timeout(options.startupTimeoutMs);
  const requestOptions = { signal, timeout: options.startupTimeoutMs };
  try {
    await client.connect(transport, requestOptions);
    const tools: McpToolDescription[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, requestOptions);
      for (const tool of page.tools) {
        tools.push({
          name: tool.name,
          inputSchema: tool.inputSchema as Record<string, unknown>,
          ...(tool.description === undefined ? {} : { description: tool.description }),
        });
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { ok: true, server: { client, transport, tools } };
  } catch (error) {
    // A server that died as it started fails the first write (EPIPE) before its exit is seen.
    const brokenPipe = (error as NodeJS.ErrnoException | undefined)?.code === "EPIPE";
    if (brokenPipe && transport instanceof ProcessTransport) await transport.exitWithin(1000);
    const ended = transport.exitDescription;
    await client.close().catch(() => undefined);
    await transport.close();
    const reason = signal.aborted
      ? `did not start within ${options.startupTimeoutMs} ms (MCP_TIMEOUT)`
      : ended !== undefined
        ? `${ended} while starting`
        : messageOf(error);
    return { ok: false, error: reason, stderrTail: transport.stderrTail };
  }
}
