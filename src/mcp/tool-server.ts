/**
 * Kernel tools served as an MCP server over stdio (newline-delimited JSON-RPC 2.0): what
 * `rudder mcp-channel-tools` runs for every agent behind the gateway, both engines. Only the
 * part of MCP a tool server needs: `initialize`, `ping`, `tools/list`, `tools/call`;
 * notifications are read and ignored, other requests get "method not found". Written here
 * rather than with the MCP SDK's server because each channel agent starts one, and this one
 * loads nothing but the tools. A tool's input is validated by its own schema first; a tool
 * failure is a result with `isError`, as MCP says.
 */
import { createInterface } from "node:readline";
import * as v from "valibot";
import type { AnyTool } from "../tools/types.js";

const LATEST_PROTOCOL = "2025-06-18";

export interface ToolServerOptions {
  tools: AnyTool[];
  /** The real path the tools work in. */
  workspace: string;
  name: string;
  version: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Aborted to stop a call in flight; the server ends when its input ends. */
  signal: AbortSignal;
}

interface Request {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

type Answer = { result: unknown } | { error: { code: number; message: string } };

/** Serves until the input ends; resolves then. */
export async function serveTools(options: ToolServerOptions): Promise<void> {
  // readline's line splitting is enough for a client that writes one JSON value per line.
  const lines = createInterface({ input: options.input, crlfDelay: Number.POSITIVE_INFINITY });
  const pending = new Set<Promise<void>>();
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let request: Request;
    try {
      request = JSON.parse(line) as Request;
    } catch {
      write(options.output, { id: null, error: { code: -32700, message: "parse error" } });
      continue;
    }
    if (request.id === undefined || request.id === null) continue;
    const work = answer(request, options).then((reply) =>
      write(options.output, { id: request.id, ...reply }),
    );
    pending.add(work);
    void work.finally(() => pending.delete(work));
  }
  await Promise.all(pending);
}

function write(output: NodeJS.WritableStream, message: Record<string, unknown>): void {
  output.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

async function answer(request: Request, options: ToolServerOptions): Promise<Answer> {
  const params = (request.params ?? {}) as Record<string, unknown>;
  switch (request.method) {
    case "initialize":
      return {
        result: {
          protocolVersion:
            typeof params.protocolVersion === "string" ? params.protocolVersion : LATEST_PROTOCOL,
          capabilities: { tools: {} },
          serverInfo: { name: options.name, version: options.version },
        },
      };
    case "ping":
      return { result: {} };
    case "tools/list":
      return {
        result: {
          tools: options.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            inputSchema: tool.jsonSchema,
          })),
        },
      };
    case "tools/call":
      return { result: await call(params, options) };
    default:
      return { error: { code: -32601, message: `method not found: ${String(request.method)}` } };
  }
}

async function call(params: Record<string, unknown>, options: ToolServerOptions) {
  const tool = options.tools.find((candidate) => candidate.name === params.name);
  const failed = (text: string) => ({ content: [{ type: "text", text }], isError: true });
  if (tool === undefined) return failed(`No tool named ${String(params.name)}.`);
  const parsed = v.safeParse(tool.inputSchema, params.arguments ?? {});
  if (!parsed.success) {
    const issues = parsed.issues.map((issue) => {
      const key = issue.path?.map((item) => String(item.key)).join(".");
      return key ? `${key}: ${issue.message}` : issue.message;
    });
    return failed(`Invalid input for ${tool.name}: ${issues.join("; ")}`);
  }
  const result = await tool.execute(parsed.output as Record<string, unknown>, {
    workspace: options.workspace,
    signal: options.signal,
  });
  return { content: [{ type: "text", text: result.content }], isError: result.isError };
}
