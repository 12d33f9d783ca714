import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import { openEvents, startTestGateway, type TestGateway } from "./helpers.js";

/** The per-channel position in an SSE id `<run>-<n>`. */
function position(id: string | undefined): number {
  return Number(id?.split("-")[1]);
}

describe("a channel's Server-Sent Events", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ prefix: "sse", scenario: "steer", heartbeatMs: 200 });
  });
  afterAll(async () => {
    await gateway.cleanup();
  });

  it("streams routing and agent events with ids, and resumes after Last-Event-ID", async () => {
    const url = `${gateway.url}/api/channels/live/events`;
    const stream = openEvents(url, { authorization: `Bearer ${gateway.token}` });
    await waitFor(() => stream.comments.includes(": connected"), "the stream to open");
    const first = await gateway.api<{ id: string }>("POST", "/api/channels/live/messages", {
      text: "first",
    });
    await stream.waitFor((event) => event.data.type === "text_delta", "the first text");
    await gateway.api("POST", "/api/channels/live/messages", { text: "second" });
    const reply = await stream.waitFor((event) => event.data.type === "reply", "the reply");
    expect(reply.data).toMatchObject({
      channelId: "live",
      message: { kind: "reply", replyTo: first.body.id },
    });
    const types = stream.events.map((event) => event.data.type);
    expect(types).toEqual(
      expect.arrayContaining(["message_received", "turn_start", "text_delta", "turn_end", "reply"]),
    );
    expect(types.indexOf("message_received")).toBeLessThan(types.indexOf("turn_start"));
    const received = stream.events.filter((event) => event.data.type === "message_received");
    expect(received.map((event) => event.data.disposition)).toEqual(["started", "steered"]);
    const run = stream.events[0]?.id?.split("-")[0];
    expect(stream.events.every((event) => event.id?.startsWith(`${run}-`))).toBe(true);
    const ids = stream.events.map((event) => position(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(stream.events.every((event) => event.data.channelId === "live")).toBe(true);
    await waitFor(() => stream.comments.includes(": ping"), "a heartbeat");
    await stream.close();

    const middle = stream.events[2]!;
    const resumed = openEvents(`${url}?token=${gateway.token}`, {
      "last-event-id": middle.id!,
    });
    const last = stream.events.at(-1)!;
    await resumed.waitFor((event) => event.id === last.id, "the replay up to the last event");
    expect(resumed.events.map((event) => event.id)).toEqual(
      stream.events.slice(3).map((event) => event.id),
    );
    await resumed.close();

    const byQuery = openEvents(`${url}?token=${gateway.token}&lastEventId=${last.id}`);
    await gateway.api("POST", "/api/channels/live/messages", { text: "third" });
    const next = await byQuery.waitFor((event) => event.data.type === "message_received", "new");
    expect(position(next.id)).toBe(position(last.id) + 1);
    await byQuery.close();

    // An id kept from an earlier run of the gateway means nothing in this one: all is replayed.
    for (const stale of [`${run}x-${position(last.id) + 50}`, "12"]) {
      const fromEarlierRun = openEvents(`${url}?token=${gateway.token}`, {
        "last-event-id": stale,
      });
      await fromEarlierRun.waitFor((event) => event.id === next.id, "the whole replay");
      expect(fromEarlierRun.events[0]?.id).toBe(stream.events[0]?.id);
      await fromEarlierRun.close();
    }
  });

  it("answers HEAD with the stream's headers alone, and the connection serves the next request", async () => {
    const { host } = new URL(gateway.url);
    const auth = `Authorization: Bearer ${gateway.token}`;
    const socket = connect(Number(new URL(gateway.url).port), "127.0.0.1");
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    try {
      // Two requests on one keep-alive connection: the HEAD's answer must end for the next.
      socket.write(
        `HEAD /api/channels/head/events HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n\r\n` +
          `GET /api/health HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n\r\n`,
      );
      await waitFor(() => text.includes('"ok":true'), "the health answer after the HEAD", 5_000);
      const answers = text.split(/(?=HTTP\/1\.1 )/);
      expect(answers[0]).toMatch(/^HTTP\/1\.1 200/);
      expect(answers[0]).toMatch(/content-type: text\/event-stream/i);
      expect(answers[0]).not.toContain(": connected");
      expect(answers[1]).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      socket.destroy();
    }
  });
});
