import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The host's answer to one relayed message: its `control_response`, or why none came. */
export type RelayAnswer =
  | { ok: true; response: Record<string, unknown> }
  | { ok: false; error: string };

/**
 * Sends one MCP message to an in-process server of the host (an `mcp_message` control
 * request) and resolves with the host's answer, whose `mcp_response` is the server's reply.
 * Never rejects.
 */
export type McpRelay = (
  serverName: string,
  message: JSONRPCMessage,
  signal: AbortSignal,
) => Promise<RelayAnswer>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * An MCP client transport to a server that lives in the host process (the Agent SDK's
 * `createSdkMcpServer`), as Claude Code reaches one: every message goes out as an
 * `mcp_message` control request; a request's reply comes back in the answer's
 * `mcp_response`. A host that answers with an error, or not at all, gives the request a
 * JSON-RPC error, so the call fails as data. `close()` cancels what is in flight.
 */
export class HostRelayTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #serverName: string;
  readonly #relay: McpRelay;
  readonly #closing = new AbortController();

  constructor(serverName: string, relay: McpRelay) {
    this.#serverName = serverName;
    this.#relay = relay;
  }

  /** In-process servers have no process, stderr or exit of their own. */
  readonly pid = undefined;
  readonly stderrTail = "";
  readonly exitDescription = undefined;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closing.signal.aborted) throw new Error("the host relay is closed");
    const answer = this.#relay(this.#serverName, message, this.#closing.signal);
    if (!("method" in message) || !("id" in message)) return;
    const id = message.id;
    void answer.then((settled) => {
      if (this.#closing.signal.aborted) return;
      const reply = settled.ok ? settled.response.mcp_response : undefined;
      if (isObject(reply) && reply.jsonrpc === "2.0") {
        this.onmessage?.(reply as JSONRPCMessage);
        return;
      }
      const why = settled.ok ? "the host's answer carried no mcp_response" : settled.error;
      this.onmessage?.({
        jsonrpc: "2.0",
        id,
        error: { code: -32603, message: `SDK MCP server "${this.#serverName}": ${why}` },
      });
    });
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    this.onclose?.();
  }
}
