import { describe, expect, it } from "vitest";
import { NdjsonDecoder, type NdjsonError } from "../../src/claude-cli/ndjson.js";

function decode(chunks: (string | Buffer)[], maxLineLength?: number) {
  const values: unknown[] = [];
  const errors: NdjsonError[] = [];
  const decoder = new NdjsonDecoder(
    { onValue: (value) => values.push(value), onError: (error) => errors.push(error) },
    maxLineLength === undefined ? {} : { maxLineLength },
  );
  for (const chunk of chunks) decoder.push(chunk);
  decoder.end();
  return { values, errors };
}

describe("NdjsonDecoder", () => {
  it("splits on LF and keeps a partial line across chunks", () => {
    const { values, errors } = decode(['{"a":1}\n{"b"', ':2}\n{"c":3}\n']);
    expect(values).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
    expect(errors).toEqual([]);
  });

  it("strips CR from CRLF lines and skips blank lines", () => {
    const { values, errors } = decode(['{"a":1}\r\n\r\n   \n\n{"b":2}\r\n']);
    expect(values).toEqual([{ a: 1 }, { b: 2 }]);
    expect(errors).toEqual([]);
  });

  it("does not split on U+2028 or U+2029 inside a string", () => {
    const { values } = decode([`{"text":"one\u2028two\u2029three"}\n`]);
    expect(values).toEqual([{ text: "one\u2028two\u2029three" }]);
  });

  it("decodes a multi-byte character split across chunks", () => {
    const bytes = Buffer.from('{"text":"\u00e9\u4e2d"}\n', "utf8");
    const { values } = decode([bytes.subarray(0, 11), bytes.subarray(11)]);
    expect(values).toEqual([{ text: "\u00e9\u4e2d" }]);
  });

  it("flushes a missing final newline at end", () => {
    const { values } = decode(['{"a":1}\n{"b":2}']);
    expect(values).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it("reports corrupt JSON and keeps going", () => {
    const { values, errors } = decode(['not json\n{"a":1}\n{"cut":']);
    expect(values).toEqual([{ a: 1 }]);
    expect(errors.map((error) => error.kind)).toEqual(["invalid_json", "invalid_json"]);
    expect(errors[0]?.excerpt).toBe("not json");
  });

  it("parses a 10 MB line under the default cap", () => {
    const big = "x".repeat(10 * 1024 * 1024);
    const line = `${JSON.stringify({ big })}\n`;
    const chunks: string[] = [];
    for (let index = 0; index < line.length; index += 65536)
      chunks.push(line.slice(index, index + 65536));
    const { values, errors } = decode([...chunks, '{"after":true}\n']);
    expect(errors).toEqual([]);
    expect(values).toHaveLength(2);
    expect((values[0] as { big: string }).big.length).toBe(big.length);
  });

  it("reports an over-long line, counting the partial, and resyncs at the next LF", () => {
    const { values, errors } = decode(['{"a":1}\n{"big":"', "y".repeat(500), '"}\n{"b":2}\n'], 100);
    expect(values).toEqual([{ a: 1 }, { b: 2 }]);
    // At once when it passes the cap, then with its whole length once it ended.
    expect(errors.map((error) => [error.kind, error.length])).toEqual([
      ["line_too_long", undefined],
      ["line_dropped", 510],
    ]);
    expect(errors[1]?.excerpt).toMatch(/^\{"big":"y/);
  });

  it("reports the length of an over-long line the stream ends in", () => {
    const errors: NdjsonError[] = [];
    const decoder = new NdjsonDecoder(
      { onValue: () => {}, onError: (error) => errors.push(error) },
      { maxLineLength: 100 },
    );
    decoder.push(`{"big":"${"q".repeat(300)}`);
    decoder.push("q".repeat(200));
    expect(errors.map((error) => error.kind)).toEqual(["line_too_long"]);
    decoder.end();
    expect(errors.map((error) => [error.kind, error.length])).toEqual([
      ["line_too_long", undefined],
      ["line_dropped", 508],
    ]);
  });

  it("reports an over-long line that arrives in one chunk", () => {
    const { values, errors } = decode([`{"big":"${"z".repeat(500)}"}\n{"b":2}`], 100);
    expect(values).toEqual([{ b: 2 }]);
    expect(errors.map((error) => [error.kind, error.length])).toEqual([
      ["line_too_long", undefined],
      ["line_dropped", 510],
    ]);
  });
});
