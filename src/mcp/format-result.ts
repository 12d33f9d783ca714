import { tmpdir } from "node:os";
import { join } from "node:path";
import { BoundedOutput } from "../tools/bounded-output.js";
import type { ToolResult, ToolResultPart } from "../tools/types.js";
import { saveMediaFile } from "./media-file.js";

/**
 * The most of a result the model is shown: Claude Code's default of 25,000
 * tokens, at about four characters a token. Head and tail are kept.
 */
export const MAX_RESULT_CHARS = 100_000;

/** Image types the Messages API takes as `image` blocks. */
const MODEL_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The API's limit for one image, in base64 characters (5 MB). */
const MAX_IMAGE_BASE64 = 5 * 1024 * 1024;

/** Where media the model cannot be shown is written by default. */
export const DEFAULT_MEDIA_DIRECTORY = join(tmpdir(), "rudder-mcp-media");

/** The parts of an MCP `tools/call` result rudder reads (the SDK's CallToolResult). */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

export interface FormatOptions {
  /** The server's name, in the line that describes media written to a file. */
  serverName?: string;
  /** Where audio (and images the API refuses) are written. */
  mediaDirectory?: string;
}

function mediaPart(item: Record<string, unknown>, options: FormatOptions): ToolResultPart {
  const mimeType = String(item.mimeType ?? "application/octet-stream");
  const data = typeof item.data === "string" ? item.data : "";
  if (item.type === "image" && MODEL_IMAGE_TYPES.has(mimeType) && data.length <= MAX_IMAGE_BASE64) {
    return { type: "image", mediaType: mimeType, data };
  }
  const size = Math.floor((data.length * 3) / 4);
  const from = options.serverName === undefined ? "" : ` from ${options.serverName}`;
  const path = saveMediaFile(options.mediaDirectory ?? DEFAULT_MEDIA_DIRECTORY, data, mimeType);
  return {
    type: "text",
    text:
      path === undefined
        ? `[${item.type} content${from}: ${mimeType}, about ${size} bytes, not shown]`
        : `[${item.type} content${from}: ${mimeType}, about ${size} bytes, saved to ${path}]`,
  };
}

function partOf(block: unknown, options: FormatOptions): ToolResultPart {
  if (typeof block !== "object" || block === null)
    return { type: "text", text: "[unreadable content]" };
  const item = block as Record<string, unknown>;
  switch (item.type) {
    case "text":
      return { type: "text", text: typeof item.text === "string" ? item.text : "" };
    case "image":
    case "audio":
      return mediaPart(item, options);
    case "resource_link":
      return {
        type: "text",
        text: `[resource link: ${String(item.uri ?? "")}${item.name ? ` (${String(item.name)})` : ""}]`,
      };
    case "resource": {
      const resource = (item.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === "string") return { type: "text", text: resource.text };
      return {
        type: "text",
        text: `[resource: ${String(resource.uri ?? "")}, ${String(resource.mimeType ?? "binary")}, not shown]`,
      };
    }
    default:
      return { type: "text", text: `[${String(item.type)} content, not shown]` };
  }
}

function bounded(text: string): string {
  const output = new BoundedOutput(MAX_RESULT_CHARS / 2, MAX_RESULT_CHARS / 2);
  output.append(text);
  return output.toString();
}

/**
 * A tool result for the model: the text blocks joined by newlines, each other block in a line
 * (audio and images the API refuses written to a file it names), the structured content as
 * JSON when there is nothing else, `(no output)` when empty, head and tail of text longer than
 * MAX_RESULT_CHARS. With images the API takes (PNG, JPEG, GIF, WebP up to 5 MB), `parts`
 * carries every block in the server's order, the images as images. `isError` as the server said.
 */
export function formatCallResult(result: McpCallResult, options: FormatOptions = {}): ToolResult {
  const parts = (result.content ?? [])
    .map((block) => partOf(block, options))
    .filter((part) => part.type !== "text" || part.text !== "");
  const texts = parts.flatMap((part) => (part.type === "text" ? [part.text] : []));
  if (parts.length === 0 && result.structuredContent !== undefined) {
    texts.push(JSON.stringify(result.structuredContent));
  }
  const isError = result.isError === true;
  const content =
    texts.length === 0 && parts.length === 0 ? "(no output)" : bounded(texts.join("\n"));
  if (!parts.some((part) => part.type === "image")) return { content, isError };
  const boundedParts = parts.map((part) =>
    part.type === "text" ? { type: "text" as const, text: bounded(part.text) } : part,
  );
  return { content, isError, parts: boundedParts };
}
