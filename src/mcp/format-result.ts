import { BoundedOutput } from "../tools/bounded-output.js";
import type { ToolResult } from "../tools/types.js";

/**
 * The most of a result the model is shown: Claude Code's default of 25,000
 * tokens, at about four characters a token. Head and tail are kept.
 */
export const MAX_RESULT_CHARS = 100_000;

/** The parts of an MCP `tools/call` result rudder reads (the SDK's CallToolResult). */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

function describeBlock(block: unknown): string {
  if (typeof block !== "object" || block === null) return "[unreadable content]";
  const item = block as Record<string, unknown>;
  switch (item.type) {
    case "text":
      return typeof item.text === "string" ? item.text : "";
    case "image":
    case "audio": {
      const size = typeof item.data === "string" ? Math.floor((item.data.length * 3) / 4) : 0;
      return `[${item.type} content: ${String(item.mimeType ?? "unknown type")}, about ${size} bytes, not shown]`;
    }
    case "resource_link":
      return `[resource link: ${String(item.uri ?? "")}${item.name ? ` (${String(item.name)})` : ""}]`;
    case "resource": {
      const resource = (item.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === "string") return resource.text;
      return `[resource: ${String(resource.uri ?? "")}, ${String(resource.mimeType ?? "binary")}, not shown]`;
    }
    default:
      return `[${String(item.type)} content, not shown]`;
  }
}

/**
 * A tool result for the model: the text blocks joined by newlines, each
 * non-text block summarised in one line, the structured content as JSON when
 * there is nothing else, `(no output)` when empty, head and tail of what is
 * longer than MAX_RESULT_CHARS. `isError` as the server said.
 */
export function formatCallResult(result: McpCallResult): ToolResult {
  const parts = (result.content ?? []).map(describeBlock).filter((part) => part !== "");
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  const isError = result.isError === true;
  if (parts.length === 0) return { content: "(no output)", isError };
  const output = new BoundedOutput(MAX_RESULT_CHARS / 2, MAX_RESULT_CHARS / 2);
  output.append(parts.join("\n"));
  return { content: output.toString(), isError };
}
