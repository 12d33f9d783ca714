import { describe, expect, it } from "vitest";
import { formatCallResult, MAX_RESULT_CHARS } from "../../src/mcp/format-result.js";

describe("formatCallResult", () => {
  it("joins text, summarises other content in a line each, and keeps isError", () => {
    expect(
      formatCallResult({
        content: [
          { type: "text", text: "first" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          { type: "resource_link", uri: "file:///a.txt", name: "a.txt" },
          { type: "resource", resource: { uri: "file:///b.txt", text: "inline b" } },
          { type: "resource", resource: { uri: "file:///c.bin", blob: "AA==" } },
          { type: "text", text: "last" },
        ],
        isError: true,
      }),
    ).toEqual({
      content: [
        "first",
        "[audio content: audio/wav, about 3 bytes, not shown]",
        "[resource link: file:///a.txt (a.txt)]",
        "inline b",
        "[resource: file:///c.bin, binary, not shown]",
        "last",
      ].join("\n"),
      isError: true,
    });
  });

  it("shows structured content when there is no text, and says when there is nothing", () => {
    expect(formatCallResult({ content: [], structuredContent: { sum: 3 } })).toEqual({
      content: '{"sum":3}',
      isError: false,
    });
    expect(formatCallResult({ content: [] })).toEqual({ content: "(no output)", isError: false });
  });

  it("keeps the head and tail of a result longer than the cap", () => {
    const long = `${"a".repeat(MAX_RESULT_CHARS)}${"z".repeat(1000)}`;
    const { content } = formatCallResult({ content: [{ type: "text", text: long }] });
    expect(content.length).toBeLessThan(MAX_RESULT_CHARS + 100);
    expect(content.startsWith("aaa")).toBe(true);
    expect(content.endsWith("zzz")).toBe(true);
    expect(content).toContain("[1000 characters cut]");
  });
});
