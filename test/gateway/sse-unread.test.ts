import { connect } from "node:net";
import { afterEach, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import { openEvents, startTestGateway, type TestGateway } from "./helpers.js";

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.cleanup();
  gateway = undefined;
});

/** The per-channel position in an SSE id `<run>-<n>`. */
function position(id: string | undefined): number {
  return Number(id?.split("-")[1]);
}

it("cuts off an event stream whose client reads nothing once it is maxUnreadEventBytes behind, while a reading stream of the channel gets every event", async () => {
  const maxUnread = 2 * 2 ** 20;
  gateway = await startTestGateway({ prefix: "sse-unread", maxUnreadEventBytes: maxUnread });
  const path = `/api/channels/flood/events?token=${gateway.token}`;
  const reading = openEvents(`${gateway.url}${path}`);
  await waitFor(() => reading.comments.includes(": connected"), "the reading stream to open");

  // A client that sends its request and then never reads: what the gateway writes piles up in
  // the kernel's buffers, then in the response's.
  const port = Number(new URL(gateway.url).port);
  const stuck = connect(port, "127.0.0.1");
  stuck.pause();
  let closed = false;
  stuck.on("close", () => {
    closed = true;
  });
  stuck.on("error", () => {});
  stuck.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  await waitFor(() => gateway?.eventStreams() === 2, "the stuck stream to open");

  // Each message's text comes back in several events (received, turn start, the echo, reply).
  const text = "x".repeat(128 * 1024);
  let streamed = 0;
  let sent = 0;
  // Half the default cap: without the option the stuck stream would not be cut by then.
  while (gateway.eventStreams() === 2 && streamed < 32 * 2 ** 20) {
    const posted = await gateway.api<{ id: string }>("POST", "/api/channels/flood/messages", {
      text: `${sent} ${text}`,
    });
    sent += 1;
    await reading.waitFor(
      (event) =>
        event.data.type === "reply" &&
        (event.data.message as { replyTo?: string }).replyTo === posted.body.id,
      `the reply to message ${sent}`,
    );
    streamed = reading.events.reduce((sum, event) => sum + JSON.stringify(event.data).length, 0);
  }
  expect(gateway.eventStreams()).toBe(1);
  expect(streamed).toBeGreaterThan(maxUnread);

  // The reading stream goes on, and has missed nothing.
  const last = await gateway.api<{ id: string }>("POST", "/api/channels/flood/messages", {
    text: "after the cut",
  });
  await reading.waitFor(
    (event) =>
      event.data.type === "reply" &&
      (event.data.message as { replyTo?: string }).replyTo === last.body.id,
    "the reply after the cut",
  );
  const positions = reading.events.map((event) => position(event.id));
  expect(positions).toEqual(positions.map((_, index) => index + 1));
  const replies = reading.events.filter((event) => event.data.type === "reply");
  expect(replies).toHaveLength(sent + 1);

  // The stuck client, reading at last, finds its stream ended short of the latest events.
  let got = "";
  stuck.on("data", (chunk: Buffer) => {
    got += chunk.toString("latin1");
  });
  stuck.resume();
  await waitFor(() => closed, "the stuck socket to close");
  expect(got.startsWith("HTTP/1.1 200")).toBe(true);
  expect(got).not.toContain("after the cut");
  expect(got.length).toBeLessThan(streamed);
  await reading.close();
}, 120_000);
