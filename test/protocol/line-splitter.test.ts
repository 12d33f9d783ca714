import { describe, expect, it } from "vitest";
import { parseInputLine } from "../../src/protocol/input-line.js";
import { LineSplitter } from "../../src/protocol/line-splitter.js";

describe("LineSplitter", () => {
  it("splits on LF only, strips CR, skips blank lines, keeps U+2028 inside a line", () => {
    const splitter = new LineSplitter();
    const text = '{"a":"x\u2028y"}\r\n\n  \n{"b":1}\n{"c":';
    expect(splitter.push(Buffer.from(text))).toEqual([
      { ok: true, text: '{"a":"x\u2028y"}' },
      { ok: true, text: '{"b":1}' },
    ]);
    expect(splitter.push("2}")).toEqual([]);
    expect(splitter.end()).toEqual([{ ok: true, text: '{"c":2}' }]);
  });

  it("decodes UTF-8 split across chunks", () => {
    const splitter = new LineSplitter();
    const bytes = Buffer.from('{"t":"\u00e9\u{1F600}"}\n');
    const lines = [...splitter.push(bytes.subarray(0, 8)), ...splitter.push(bytes.subarray(8))];
    expect(lines).toEqual([{ ok: true, text: '{"t":"\u00e9\u{1F600}"}' }]);
  });

  it("reports an over-long line once, drops it, and goes on", () => {
    const splitter = new LineSplitter(10);
    const first = splitter.push("x".repeat(8));
    const second = splitter.push("x".repeat(8));
    const third = splitter.push('xx\n{"ok":1}\n');
    expect(first).toEqual([]);
    expect(second).toEqual([{ ok: false, error: "input line longer than 10 characters" }]);
    expect(third).toEqual([{ ok: true, text: '{"ok":1}' }]);
  });

  it("takes a 10 MB line", () => {
    const splitter = new LineSplitter();
    const big = JSON.stringify({
      type: "user",
      message: { content: "x".repeat(10 * 1024 * 1024) },
    });
    const lines = [
      ...splitter.push(big.slice(0, 5_000_000)),
      ...splitter.push(`${big.slice(5_000_000)}\n`),
    ];
    expect(lines).toHaveLength(1);
    expect(lines[0]?.ok && lines[0].text.length).toBe(big.length);
  });
});

describe("parseInputLine", () => {
  it("reads user messages with string or block content and an optional uuid", () => {
    expect(
      parseInputLine('{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1"}'),
    ).toEqual({
      type: "user",
      text: "hi",
      images: [],
      uuid: "u1",
      warnings: [],
    });
    const blocks = parseInputLine(
      '{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}}',
    );
    expect(blocks).toMatchObject({ type: "user", text: "a\nb", uuid: undefined });
    expect(blocks.type === "user" && blocks.warnings[0]).toContain('"image"');
  });

  it("turns bad lines into data, never throws", () => {
    for (const line of [
      "{",
      "[]",
      '"text"',
      '{"type":"user"}',
      '{"type":"control_request","request":{}}',
      '{"type":"nope"}',
    ]) {
      expect(parseInputLine(line).type).toBe("invalid");
    }
    expect(parseInputLine('{"type":"keep_alive"}').type).toBe("ignored");
  });
});
