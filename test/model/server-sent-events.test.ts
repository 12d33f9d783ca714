import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/model/api-error.js";
import {
  messageStreamEvents,
  type ServerSentEvent,
  serverSentEvents,
} from "../../src/model/server-sent-events.js";

async function* pieces(...chunks: string[]): AsyncGenerator<string> {
  for (const chunk of chunks) yield chunk;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const noHeaders = () => undefined;

describe("serverSentEvents", () => {
  it("dispatches on blank lines whatever the line endings and chunk boundaries", async () => {
    const text =
      'event: message_start\ndata: {"a":1}\n\n' +
      "event: ping\r\ndata: {}\r\n\r\n" +
      ": a comment\rdata: first\rdata:second\r\r" +
      "event: last\ndata\n\n";
    const expected: ServerSentEvent[] = [
      { event: "message_start", data: '{"a":1}' },
      { event: "ping", data: "{}" },
      { event: null, data: "first\nsecond" },
      { event: "last", data: "" },
    ];
    expect(await collect(serverSentEvents(pieces(text)))).toEqual(expected);
    // Every split point, CRLF halves included, gives the same events.
    for (let cut = 1; cut < text.length; cut++) {
      const split = serverSentEvents(pieces(text.slice(0, cut), text.slice(cut)));
      expect(await collect(split)).toEqual(expected);
    }
  });

  it("drops an event cut off by the end of the stream", async () => {
    const events = await collect(serverSentEvents(pieces("data: whole\n\ndata: half")));
    expect(events).toEqual([{ event: null, data: "whole" }]);
  });
});

describe("messageStreamEvents", () => {
  it("yields parsed named events, skipping pings and unnamed ones", async () => {
    const text =
      'event: message_start\ndata: {"type":"message_start"}\n\n' +
      "event: ping\ndata: {}\n\n" +
      'data: {"type":"unnamed"}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    expect(await collect(messageStreamEvents(pieces(text), noHeaders))).toEqual([
      { type: "message_start" },
      { type: "message_stop" },
    ]);
  });

  it("throws an error event as an ApiError without a status", async () => {
    const text =
      'event: message_start\ndata: {"type":"message_start"}\n\n' +
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const seen: unknown[] = [];
    const failure = await (async () => {
      for await (const event of messageStreamEvents(pieces(text), noHeaders)) seen.push(event);
    })().catch((error: unknown) => error);
    expect(seen).toEqual([{ type: "message_start" }]);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({
      status: undefined,
      type: "overloaded_error",
      detail: "Overloaded",
    });
  });
});
