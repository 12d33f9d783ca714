import * as v from "valibot";
import { toolJsonSchema } from "./json-schema.js";
import { MAX_FILE_BYTES } from "./read-file-tool.js";
import type { Tool, ToolResult } from "./types.js";
import { openToolFile } from "./workspace-file.js";
import { filePathInput } from "./workspace-path.js";

const editFileInput = v.object({
  path: filePathInput,
  old_text: v.pipe(
    v.string(),
    v.description("The exact text to replace; it must occur exactly once in the file."),
  ),
  new_text: v.pipe(v.string(), v.description("The text to put in its place.")),
  replace_all: v.optional(
    v.pipe(
      v.boolean(),
      v.description("Replace every occurrence of old_text instead of exactly one (default false)."),
    ),
  ),
});

export type EditFileInput = v.InferOutput<typeof editFileInput>;

const description = [
  "Replace one exact piece of text in an existing file of the workspace.",
  "",
  "- `old_text` must match the file exactly, whitespace and indentation included, and (without `replace_all`) occur exactly once;",
  "  otherwise nothing changes and the error says whether it was not found or how many times it occurs.",
  "  Include a few surrounding lines to make it unique.",
  "- With `replace_all: true`, every occurrence is replaced (at least one must exist).",
  "- Everything else in the file is kept byte for byte.",
  "- Read the file first so that `old_text` is copied from its current content.",
].join("\n");

export function createEditFileTool(): Tool<EditFileInput> {
  return {
    name: "edit_file",
    description,
    inputSchema: editFileInput,
    get jsonSchema() {
      return toolJsonSchema(editFileInput);
    },
    async execute(input, context): Promise<ToolResult> {
      if (input.old_text.length === 0)
        return fail("old_text is empty; give the exact text to replace.");
      const opened = await openToolFile(context, input.path, "update");
      if (!opened.ok) return fail(opened.error);
      try {
        // Read whole, as `read_file` reads: the same cap, so a huge file costs no huge memory.
        if (opened.size > MAX_FILE_BYTES) {
          return fail(
            `${input.path} is ${opened.size} bytes, too large to edit whole (the limit is ${MAX_FILE_BYTES}); use bash (sed -i) instead.`,
          );
        }
        const bytes = await opened.handle.readFile({ signal: context.signal });
        const needle = Buffer.from(input.old_text, "utf8");
        const positions = occurrences(bytes, needle);
        if (positions.length === 0) {
          return fail(
            `old_text was not found in ${input.path}; nothing was changed. Read the file and copy the text exactly.`,
          );
        }
        const replaceAll = input.replace_all === true;
        if (positions.length > 1 && !replaceAll) {
          return fail(
            `old_text occurs ${positions.length} times in ${input.path}; nothing was changed. ` +
              "Include more surrounding text so that it occurs exactly once.",
          );
        }
        const replacement = Buffer.from(input.new_text, "utf8");
        const { updated, count } = replaceAt(
          bytes,
          replaceAll ? positions : positions.slice(0, 1),
          needle.length,
          replacement,
        );
        await opened.handle.truncate(0);
        await opened.handle.write(updated, 0, updated.length, 0);
        const replaced = count === 1 ? "1 occurrence" : `${count} occurrences`;
        return {
          content: `Edited ${input.path}: replaced ${replaced} (${updated.length} bytes now).`,
          isError: false,
          details: {
            tool: "edit",
            path: opened.path,
            oldText: input.old_text,
            newText: input.new_text,
            replaceAll,
            originalFile: bytes.toString("utf8"),
            updatedFile: updated.toString("utf8"),
          },
        };
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        return fail(`Cannot edit ${input.path}: ${text}`);
      } finally {
        await opened.handle.close();
      }
    },
  };
}

/**
 * `bytes` with `length` bytes at each of the ascending `positions` replaced; a position
 * inside an earlier replaced span is skipped (overlapping occurrences replace once).
 */
function replaceAt(
  bytes: Buffer,
  positions: readonly number[],
  length: number,
  replacement: Buffer,
): { updated: Buffer; count: number } {
  const pieces: Buffer[] = [];
  let from = 0;
  let count = 0;
  for (const at of positions) {
    if (at < from) continue;
    pieces.push(bytes.subarray(from, at), replacement);
    from = at + length;
    count += 1;
  }
  pieces.push(bytes.subarray(from));
  return { updated: Buffer.concat(pieces), count };
}

/** Start offsets of `needle` in `haystack`, overlapping ones included (they make it ambiguous too). */
function occurrences(haystack: Buffer, needle: Buffer): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    found.push(at);
  }
  return found;
}

function fail(content: string): ToolResult {
  return { content, isError: true };
}
