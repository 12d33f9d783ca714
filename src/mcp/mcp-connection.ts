import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
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

/**
 * One running MCP server: its tools and a way to call them. Calls never
 * reject: a server that died, timed out or answered with an error gives an
 * error result naming the server.
 */
export class McpConnection {
  readonly config: McpServerConfig;
  readonly tools: McpToolDescription[];
  readonly #client: Client;
  readonly #transport: ServerTransport;
  readonly #toolTimeoutMs: number;

  constructor(
    config: McpServerConfig,
    client: Client,
    transport: ServerTransport,
    tools: McpToolDescription[],
    toolTimeoutMs: number,
  ) {
    this.config = config;
    this.#client = client;
    this.#transport = transport;
    this.tools = tools;
    this.#toolTimeoutMs = config.toolTimeoutMs ?? toolTimeoutMs;
  }

  /** The name and version the server gave in its `initialize` answer. */
  get serverInfo(): { name: string; version: string } | undefined {
    const info = this.#client.getServerVersion();
    return info === undefined ? undefined : { name: info.name, version: info.version };
  }

  get pid(): number | undefined {
    return this.#transport.pid;
  }

  /** Calls a tool by the server's own name for it. */
  async call(
    toolName: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    const server = this.config.name;
    const gone = this.#transport.exitDescription;
    if (gone !== undefined) return this.#deadResult(gone);
    try {
      const result = await this.#client.callTool({ name: toolName, arguments: input }, undefined, {
        signal,
        timeout: this.#toolTimeoutMs,
      });
      // The union's other member is the 2024-10 protocol's `toolResult`, which no current server sends.
      return formatCallResult(result as McpCallResult, { serverName: server });
    } catch (error) {
      const ended = this.#transport.exitDescription;
      if (ended !== undefined) return this.#deadResult(ended);
      if (signal.aborted) {
        return { content: `Error: the call to ${toolName} was aborted`, isError: true };
      }
      return {
        content: `Error: MCP server "${server}" failed the call to ${toolName}: ${messageOf(error)}`,
        isError: true,
      };
    }
  }

  /** Stops the server: its whole process group is killed. */
  async close(): Promise<void> {
    await this.#client.close().catch(() => undefined);
    await this.#transport.close();
  }

  #deadResult(how: string): ToolResult {
    const tail = lastLine(this.#transport.stderrTail);
    return {
      content: `Error: MCP server "${this.config.name}" is not running (it ${how})${tail === "" ? "" : `; its last stderr line: ${tail}`}`,
      isError: true,
    };
  }
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
    return {
      ok: true,
      connection: new McpConnection(config, client, transport, tools, options.toolTimeoutMs),
    };
  } catch (error) {
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
