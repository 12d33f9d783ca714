import { structuredPatch } from "./structured-patch.js";
import type { ToolResult, ToolResultPart } from "./types.js";

/** A result's parts as the Messages API's content blocks (`text`, base64 `image`). */
export function partsAsBlocks(parts: readonly ToolResultPart[]) {
  return parts.map((part) =>
    part.type === "text"
      ? part
      : {
          type: "image" as const,
          source: { type: "base64" as const, media_type: part.mediaType, data: part.data },
        },
  );
}

/**
 * A tool's result as Claude Code 2.1.328 reports it to hosts (a PostToolUse hook's
 * `tool_response`, a stream-json `user` line's `tool_use_result`), per tool: `Bash`
 * `{stdout, stderr, interrupted, isImage, noOutputExpected}`, `Read` `{type: "text", file}`,
 * `Write` `{type: "create" | "update", filePath, content, structuredPatch, originalFile}`,
 * `Edit` `{filePath, oldString, newString, originalFile, structuredPatch, replaceAll}`, `Glob`
 * `{filenames, durationMs, numFiles, truncated, totalMatches, countIsComplete}`. A failure is its text after `Error: `; a
 * tool without details (an MCP tool) gives its content.
 */
export function claudeToolResponse(result: ToolResult): unknown {
  if (result.isError) {
    return result.content.startsWith("Error") ? result.content : `Error: ${result.content}`;
  }
  const details = result.details;
  switch (details?.tool) {
    case undefined:
      return result.parts === undefined ? result.content : partsAsBlocks(result.parts);
    case "bash":
      return {
        stdout: details.output.replace(/\n+$/, ""),
        stderr: "",
        interrupted: details.interrupted,
        isImage: false,
        noOutputExpected: false,
        ...(details.backgroundTaskId === undefined
          ? {}
          : { backgroundTaskId: details.backgroundTaskId }),
      };
    case "read":
      return {
        type: "text",
        file: {
          filePath: details.path,
          content: details.content.replace(/\r?\n$/, ""),
          numLines: details.numLines,
          startLine: details.startLine,
          totalLines: details.totalLines,
        },
      };
    case "write":
      return {
        type: details.created ? "create" : "update",
        filePath: details.path,
        content: details.content,
        structuredPatch:
          details.originalFile === null
            ? []
            : structuredPatch(details.originalFile, details.content),
        originalFile: details.originalFile,
        userModified: false,
      };
    case "edit":
      return {
        filePath: details.path,
        oldString: details.oldText,
        newString: details.newText,
        originalFile: details.originalFile,
        structuredPatch: structuredPatch(details.originalFile, details.updatedFile),
        userModified: false,
        replaceAll: details.replaceAll,
      };
    case "glob":
      return {
        filenames: details.filenames,
        durationMs: details.durationMs,
        numFiles: details.filenames.length,
        truncated: details.total > details.filenames.length,
        totalMatches: details.total,
        countIsComplete: true,
      };
  }
}
