import * as v from "valibot";
import type { AnyTool, ToolResult } from "../tools/types.js";
import { mcpToolName } from "./tool-name.js";

/** A tool as an MCP server lists it (the parts rudder uses). */
export interface McpToolDescription {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** Calls the server's tool by its own name; never rejects. */
export type CallServerTool = (
  toolName: string,
  input: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<ToolResult>;

/**
 * The input is only checked to be an object, fields kept as sent: the
 * server validates against its own schema and says what is wrong.
 */
const mcpInputSchema = v.looseObject({});

/**
 * A kernel tool for one tool of an MCP server, named `mcp__<server>__<tool>`,
 * with the server's description and JSON Schema shown to the model as they are.
 */
export function createMcpTool(
  serverName: string,
  tool: McpToolDescription,
  call: CallServerTool,
): AnyTool {
  return {
    name: mcpToolName(serverName, tool.name),
    description: tool.description ?? `${tool.name} (from the MCP server ${serverName})`,
    inputSchema: mcpInputSchema,
    jsonSchema: tool.inputSchema,
    execute: (input: Record<string, unknown>, context) => call(tool.name, input, context.signal),
  };
}
