/**
 * A chat source may deliver while the gateway starts (a Telegram bot's updates read back, a
 * Slack or Discord catch-up): the channel's conversation goes on from its stored session, as it
 * does for a message that comes later. The router restores the channels' sessions before any
 * source starts.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { ChannelSource, SourceDeliver } from "../../src/gateway/channel-source.js";
import { waitFor } from "../helpers/wait-for.js";
import { fakeLogEntries, startTestGateway, type TestGateway } from "./helpers.js";

const gateways: Array<{ close(): Promise<void> }> = [];
let first: TestGateway | undefined;
afterAll(async () => {
  for (const gateway of gateways.reverse()) await gateway.close().catch(() => {});
  await first?.cleanup();
});

/** A source that delivers `text` to `channelId` within its own start, before it returns. */
function deliveringAtStart(channelId: string, text: string): ChannelSource {
  return {
    name: "at-start",
    start: async (deliver: SourceDeliver) => {
      await deliver(channelId, text);
    },
    stop: async () => {},
  };
}

describe("a message a source delivers while the gateway starts", () => {
  it("goes on with the channel's stored conversation", async () => {
    first = await startTestGateway({ prefix: "source-at-start" });
    const posted = await first.api("POST", "/api/channels/chat-1/messages", { text: "first" });
    expect(posted.status).toBe(202);
    const sessionId = await waitFor(async () => {
      const { body } = await first!.api<{ channels: Array<{ id: string; sessionId: string }> }>(
        "GET",
        "/api/channels",
      );
      const messages = await first!.messages("chat-1");
      const answered = messages.some((message) => message.state === "answered");
      return answered
        ? body.channels.find((channel) => channel.id === "chat-1")?.sessionId
        : undefined;
    }, "the first message answered and its session stored");
    await first.close();

    const again = await startTestGateway({
      folders: first,
      sources: [deliveringAtStart("chat-1", "second, read back at start")],
    });
    gateways.push(again);
    const starts = await waitFor(() => {
      const entries = fakeLogEntries(first!.fakeLog).filter((entry) => entry.event === "start");
      return entries.length >= 2 ? entries : undefined;
    }, "a second agent started for the message read back");
    expect(((starts[1]?.args ?? []) as string[]).join(" ")).toContain(`--resume ${sessionId}`);
  });
});
