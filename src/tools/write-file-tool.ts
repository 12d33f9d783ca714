import * as v from "valibot";
import { toolJsonSchema } from "./json-schema.js";
import type { Tool, ToolResult } from "./types.js";
import { openToolFile } from "./workspace-file.js";
import { filePathInput } from "./workspace-path.js";

/** An overwritten file up to this size is kept in the result's details (for a host's diff). */
const MAX_ORIGINAL_BYTES = 8 * 1024 * 1024;

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
    get jsonSchema() {
      return toolJsonSchema(writeFileInput);
    },
    async execute(input, context): Promise<ToolResult> {
      const opened = await openToolFile(context, input.path, "write");
      if (!opened.ok) return { content: opened.error, isError: true };
      try {
        const originalFile =
          opened.created || opened.size > MAX_ORIGINAL_BYTES
            ? null
            : (await opened.handle.readFile({ signal: context.signal })).toString("utf8");
        const bytes = Buffer.from(input.content, "utf8");
        await opened.handle.truncate(0);
        await opened.handle.write(bytes, 0, bytes.length, 0);
        const verb = opened.created ? "Created" : "Overwrote";
        return {
          content: `${verb} ${input.path} (${bytes.length} bytes written).`,
          isError: false,
          details: {
            tool: "write",
            path: opened.path,
            content: input.content,
            created: opened.created,
            originalFile,
          },
        };
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        return { content: `Cannot write ${input.path}: ${text}`, isError: true };
      } finally {
        await opened.handle.close();
      }
    },
  };
}
