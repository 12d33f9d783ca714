import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import * as v from "valibot";
import { toolJsonSchema } from "./json-schema.js";
import type { Tool, ToolResult } from "./types.js";
import { filePathInput, resolveInWorkspace } from "./workspace-path.js";

const writeFileInput = v.object({
  path: filePathInput,
  content: v.pipe(v.string(), v.description("The complete new content of the file.")),
});

export type WriteFileInput = v.InferOutput<typeof writeFileInput>;

const description = [
  "Write a UTF-8 text file in the workspace, replacing it entirely if it exists.",
  "",
  "- Missing parent directories are created.",
  "- The content is written exactly as given: no newline is added or converted.",
  "- To change part of an existing file, prefer edit_file.",
].join("\n");

export function createWriteFileTool(): Tool<WriteFileInput> {
  return {
    name: "write_file",
    description,
    inputSchema: writeFileInput,
    jsonSchema: toolJsonSchema(writeFileInput),
    async execute(input, context): Promise<ToolResult> {
      const resolved = resolveInWorkspace(context.workspace, input.path);
      if (!resolved.ok) return { content: resolved.error, isError: true };
      try {
        const existing = await stat(resolved.path).catch(() => undefined);
        if (existing?.isDirectory()) {
          return { content: `${input.path} is a directory, not a file.`, isError: true };
        }
        await mkdir(dirname(resolved.path), { recursive: true });
        const bytes = Buffer.from(input.content, "utf8");
        await writeFile(resolved.path, bytes, { signal: context.signal });
        const verb = existing ? "Overwrote" : "Created";
        return {
          content: `${verb} ${input.path} (${bytes.length} bytes written).`,
          isError: false,
        };
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        return { content: `Cannot write ${input.path}: ${text}`, isError: true };
      }
    },
  };
}
