import * as v from "valibot";
import { toolJsonSchema } from "./json-schema.js";
import type { Tool, ToolResult } from "./types.js";
import { openToolFile } from "./workspace-file.js";
import { filePathInput } from "./workspace-path.js";

export const DEFAULT_READ_LINES = 2000;
/** Most characters one read returns, so one huge line cannot flood the context. */
export const MAX_READ_CHARS = 100_000;
/** Files above this size are refused (by `edit_file` too); read a slice of them with bash instead. */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

const readFileInput = v.object({
  path: filePathInput,
  offset: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.gtValue(0),
      v.description("1-based line to start from (default 1)."),
    ),
  ),
  limit: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.gtValue(0),
      v.description(`Number of lines to read (default ${DEFAULT_READ_LINES}).`),
    ),
  ),
});

export type ReadFileInput = v.InferOutput<typeof readFileInput>;

const description = [
  "Read a UTF-8 text file from the workspace and return its content exactly as stored.",
  "",
  `- Returns at most ${DEFAULT_READ_LINES} lines (or ${MAX_READ_CHARS} characters) per call; when there is more,`,
  "  a final note in square brackets says which lines were shown and which `offset` continues.",
  "- Use `offset` (1-based line number) and `limit` to read part of a large file.",
  "- Paths are relative to the workspace; files outside it cannot be read. Use glob to find files.",
].join("\n");

export function createReadFileTool(): Tool<ReadFileInput> {
  return {
    name: "read_file",
    description,
    inputSchema: readFileInput,
    get jsonSchema() {
      return toolJsonSchema(readFileInput);
    },
    async execute(input, context): Promise<ToolResult> {
      const opened = await openToolFile(context, input.path, "read");
      if (!opened.ok) return fail(opened.error);
      let text: string;
      try {
        if (opened.size > MAX_FILE_BYTES) {
          return fail(
            `${input.path} is ${opened.size} bytes, too large to read whole; use bash (head, tail, sed -n) for a slice.`,
          );
        }
        const bytes = await opened.handle.readFile({ signal: context.signal });
        if (bytes.includes(0)) {
          return fail(
            `${input.path} looks binary (it contains NUL bytes, ${bytes.length} bytes in all).`,
          );
        }
        text = bytes.toString("utf8");
      } catch (error) {
        return fail(`Cannot read ${input.path}: ${errorText(error)}`);
      } finally {
        await opened.handle.close();
      }
      const slice = sliceLines(text, input.offset ?? 1, input.limit ?? DEFAULT_READ_LINES);
      return {
        content: slice.text,
        isError: false,
        details: {
          tool: "read",
          path: opened.path,
          content: slice.content,
          startLine: input.offset ?? 1,
          numLines: slice.numLines,
          totalLines: slice.totalLines + (text.endsWith("\n") ? 1 : 0),
        },
      };
    },
  };
}

interface Slice {
  /** What the model is shown: the lines, and a note when more remain. */
  text: string;
  /** The lines alone. */
  content: string;
  numLines: number;
  totalLines: number;
}

/** Lines `offset`..`offset+limit-1` of `text`, verbatim, with a note when more remain. */
function sliceLines(text: string, offset: number, limit: number): Slice {
  if (text.length === 0) return { text: "(empty file)", content: "", numLines: 0, totalLines: 0 };
  const lines = text.split(/(?<=\n)/);
  const total = lines.length;
  const slice = (shown: string, content: string, numLines: number): Slice => ({
    text: shown,
    content,
    numLines,
    totalLines: total,
  });
  if (offset > total) {
    return slice(`(offset ${offset} is past the end of the file, which has ${total} lines)`, "", 0);
  }
  let content = "";
  let last = offset - 1;
  while (last < total && last - (offset - 1) < limit) {
    const line = lines[last]!;
    if (content.length + line.length > MAX_READ_CHARS) {
      if (last === offset - 1) {
        content = line.slice(0, MAX_READ_CHARS);
        return slice(
          `${content}\n[Line ${offset} alone is ${line.length} characters; showed the first ${MAX_READ_CHARS}. Use bash to see the rest.]`,
          content,
          1,
        );
      }
      break;
    }
    content += line;
    last += 1;
  }
  const count = last - (offset - 1);
  if (offset === 1 && last === total) return slice(content, content, count);
  const separator = content.endsWith("\n") ? "" : "\n";
  const more = last < total ? ` Use offset=${last + 1} to read more.` : "";
  return slice(
    `${content}${separator}[Showed lines ${offset}-${last} of ${total}.${more}]`,
    content,
    count,
  );
}

function fail(content: string): ToolResult {
  return { content, isError: true };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
