import { describe, expect, it } from "vitest";
import { ServerSentEventDecoder } from "../../src/model/server-sent-events.js";

/** Feeds `text` cut into pieces of `size` characters and collects every event. */
function decodeInPieces(text: string, size: number) {
  const decoder = new ServerSentEventDecoder();
  const events = [];
  for (let start = 0; start < text.length; start += size) {
    events.push(...decoder.push(text.slice(start, start + size)));
  }
  events.push(...decoder.end());
  return events;
}

describe("ServerSentEventDecoder", () => {
  const stream =
    'event: message_start\ndata: {"a":1}\n\n' +
    ": a comment\r\n" +
    "event: ping\r\ndata: {}\r\n\r\n" +
    'event:content_block_delta\rdata: {"b":\rdata: 2}\r\r' +
    "event: no_data\n\n" +
    "data: unnamed\n\n" +
    "event: message_stop\ndata: {}";
  const expected = [
    { event: "message_start", data: '{"a":1}' },
    { event: "ping", data: "{}" },
    { event: "content_block_delta", data: '{"b":\n2}' },
    { event: undefined, data: "unnamed" },
  ];

  it("reads events whatever the line endings, and drops events without data", () => {
    expect(decodeInPieces(stream, stream.length)).toEqual(expected);
  });

  it("reads the same events when chunks split lines anywhere, CRLF included", () => {
    for (const size of [1, 2, 3, 7, 13]) expect(decodeInPieces(stream, size)).toEqual(expected);
  });

  it("ends an unfinished event without emitting it, and a last line without its ending counts", () => {
    const decoder = new ServerSentEventDecoder();
    expect(decoder.push("event: x\ndata: 1\n\nevent: y\ndata: 2")).toEqual([
      { event: "x", data: "1" },
    ]);
    expect(decoder.end()).toEqual([]);
    expect(decoder.push("data: 3\n\n")).toEqual([{ event: undefined, data: "3" }]);
  });

  it("decodes a 10 MB data line in 64 KiB chunks in one pass (it took ~18 s when each chunk re-split the line)", () => {
    const text = "long reply. ".repeat(875_000);
    const started = performance.now();
    const events = decodeInPieces(`event: delta\ndata: ${text}\n\n`, 65_536);
    expect(events).toEqual([{ event: "delta", data: text }]);
    expect(performance.now() - started).toBeLessThan(8_000);
  });
});
