import { describe, expect, it } from "vitest";
import { encodeOutputLine, MAX_OUTPUT_LINE_BYTES } from "../../src/protocol/line-writer.js";
import type { OutputLine } from "../../src/protocol/output-lines.js";

function decode(text: string): OutputLine[] {
  expect(text.endsWith("\n")).toBe(true);
  const lines = text.slice(0, -1).split("\n");
  for (const line of lines)
    expect(Buffer.byteLength(`${line}\n`)).toBeLessThanOrEqual(MAX_OUTPUT_LINE_BYTES);
  return lines.map((line) => JSON.parse(line) as OutputLine);
}

function assistant(text: string): OutputLine {
  return {
    type: "assistant",
    message: { id: "msg_1", role: "assistant", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
    session_id: "s",
    uuid: "u-1",
  };
}

describe("encodeOutputLine keeps every stream-json line under 1 MiB", () => {
  it("writes a line that fits as it is", () => {
    const line = assistant("hello");
    expect(encodeOutputLine(line)).toBe(`${JSON.stringify(line)}\n`);
  });

  // Eight pieces show the split as well as forty; a 20 MB reply end to end is `npm run
  // chaos`'s "20 MB model reply".
  it("splits an 8 MB assistant text into pieces of the same message that join to the whole", () => {
    const text = `${"abc€\u2028\n\u0001".repeat(500_000)}😀end`;
    const lines = decode(encodeOutputLine(assistant(text)));
    expect(lines.length).toBeGreaterThan(7);
    const pieces = lines.map((line) => {
      const message = line.message as { id: string; content: { text: string }[] };
      expect(message.id).toBe("msg_1");
      expect(message.content).toHaveLength(1);
      return message.content[0]?.text ?? "";
    });
    expect(pieces.join("")).toBe(text);
    expect(new Set(lines.map((line) => line.uuid)).size).toBe(lines.length);
  });

  it("splits a huge stream_event text delta into several deltas", () => {
    const text = "z".repeat(3 * MAX_OUTPUT_LINE_BYTES);
    const lines = decode(
      encodeOutputLine({
        type: "stream_event",
        event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
        session_id: "s",
        uuid: "u",
      }),
    );
    expect(lines.length).toBeGreaterThanOrEqual(4);
    const joined = lines
      .map((line) => (line.event as { delta: { text: string } }).delta.text)
      .join("");
    expect(joined).toBe(text);
  });

  it("cuts a result's long texts with a note saying how much, keeping the fields", () => {
    const text = "r".repeat(20_000_000);
    const [line, ...rest] = decode(
      encodeOutputLine({
        type: "result",
        subtype: "success",
        is_error: false,
        result: text,
        errors: [text],
        session_id: "s",
        usage: { output_tokens: 5 },
      }),
    );
    expect(rest).toEqual([]);
    expect(line?.subtype).toBe("success");
    expect(line?.usage).toEqual({ output_tokens: 5 });
    const result = line?.result as string;
    expect(result.startsWith("rrrr")).toBe(true);
    expect(result).toMatch(
      /\[rudder: \d+ more characters not shown: stream-json lines are kept under 1048576 bytes\]$/,
    );
    const shown = result.indexOf("\n[rudder:");
    const cut = Number(/(\d+) more/.exec(result)?.[1]);
    expect(shown + cut).toBe(text.length);
  });
});
