import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatCallResult, MAX_RESULT_CHARS } from "../../src/mcp/format-result.js";

const mediaDirectory = mkdtempSync(join(tmpdir(), "rudder-media-"));
afterAll(() => rmSync(mediaDirectory, { recursive: true, force: true }));

describe("formatCallResult", () => {
  it("joins text, summarises other content in a line each, and keeps isError", () => {
    expect(
      formatCallResult({
        content: [
          { type: "text", text: "first" },
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
        "[resource link: file:///a.txt (a.txt)]",
        "inline b",
        "[resource: file:///c.bin, binary, not shown]",
        "last",
      ].join("\n"),
      isError: true,
    });
  });

  it("passes images the API takes as images, every block in the server's order", () => {
    expect(
      formatCallResult({
        content: [
          { type: "text", text: "before" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          { type: "text", text: "after" },
        ],
      }),
    ).toEqual({
      content: "before\nafter",
      isError: false,
      parts: [
        { type: "text", text: "before" },
        { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
        { type: "text", text: "after" },
      ],
    });
    expect(
      formatCallResult({ content: [{ type: "image", data: "R0lG", mimeType: "image/gif" }] }),
    ).toEqual({
      content: "",
      isError: false,
      parts: [{ type: "image", mediaType: "image/gif", data: "R0lG" }],
    });
  });

  it("writes audio and images the API refuses to a file and names it", () => {
    const result = formatCallResult(
      {
        content: [
          {
            type: "audio",
            data: Buffer.from("RIFF-sound").toString("base64"),
            mimeType: "audio/wav",
          },
          {
            type: "image",
            data: Buffer.from("<svg/>").toString("base64"),
            mimeType: "image/svg+xml",
          },
        ],
      },
      { serverName: "media", mediaDirectory },
    );
    expect(result.parts).toBeUndefined();
    const lines = result.content.split("\n");
    expect(lines).toHaveLength(2);
    const audio =
      /^\[audio content from media: audio\/wav, about \d+ bytes, saved to (.+\.wav)\]$/.exec(
        lines[0] ?? "",
      );
    const svg =
      /^\[image content from media: image\/svg\+xml, about \d+ bytes, saved to (.+\.svg)\]$/.exec(
        lines[1] ?? "",
      );
    expect(readFileSync(audio?.[1] ?? "", "utf8")).toBe("RIFF-sound");
    expect(readFileSync(svg?.[1] ?? "", "utf8")).toBe("<svg/>");
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
