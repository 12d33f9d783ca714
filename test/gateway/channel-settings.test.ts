/**
 * Naming and archiving channels through the API (`PATCH /api/channels/:id`; an archived channel
 * that gets a new message is back in the list), and the chat title a source gives with its
 * messages (`meta.chatTitle`) kept on the channel.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChannelSource, SourceDelivery } from "../../src/gateway/index.js";
import type { ChannelRecord } from "../../src/gateway/store/store.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

type Deliver = (
  channelId: string,
  text: string,
  meta?: Record<string, unknown>,
) => Promise<SourceDelivery>;

let gateway: TestGateway;
let deliver: Deliver;

beforeAll(async () => {
  const source: ChannelSource = {
    name: "chat",
    start: async (given) => {
      deliver = given;
    },
    stop: async () => {},
  };
  gateway = await startTestGateway({ prefix: "channel-settings", sources: [source] });
});

afterAll(async () => {
  await gateway?.cleanup();
});

async function listed(channelId: string): Promise<ChannelRecord | undefined> {
  const { body } = await gateway.api<{ channels: ChannelRecord[] }>("GET", "/api/channels");
  return body.channels.find((channel) => channel.id === channelId);
}

describe("channel names and archiving", () => {
  it("keeps a chat's title from its source, and the name given through the API over it", async () => {
    await deliver("chat:7", "hello", { chatTitle: "  Billing\nteam " });
    const noted = await waitFor(
      async () => ((await listed("chat:7"))?.chatTitle ? listed("chat:7") : undefined),
      "the chat title stored",
    );
    expect(noted).toMatchObject({ chatTitle: "Billing team", title: null, archivedAt: null });

    const renamed = await gateway.api<{ channel: ChannelRecord }>("PATCH", "/api/channels/chat:7", {
      title: " Invoices ",
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.channel).toMatchObject({ title: "Invoices", chatTitle: "Billing team" });
    const cleared = await gateway.api<{ channel: ChannelRecord }>("PATCH", "/api/channels/chat:7", {
      title: null,
    });
    expect(cleared.body.channel.title).toBeNull();
  });

  it("archives a channel (kept, listed with archivedAt, its history whole), un-archived by a new message, and restores it", async () => {
    // Its earlier message answered first: the history must not change while it is archived.
    const before = await waitFor(async () => {
      const messages = await gateway.messages("chat:7");
      return messages.some((message) => message.state === "received") ? undefined : messages;
    }, "chat:7's earlier message answered");
    const archived = await gateway.api<{ channel: ChannelRecord }>(
      "PATCH",
      "/api/channels/chat:7",
      { archived: true },
    );
    expect(archived.status).toBe(200);
    expect(Number.isNaN(Date.parse(archived.body.channel.archivedAt ?? ""))).toBe(false);
    expect((await listed("chat:7"))?.archivedAt).toBe(archived.body.channel.archivedAt);
    expect(await gateway.messages("chat:7")).toEqual(before);
    // A new message brings it back to the list, as a chat app does with an archived chat.
    await deliver("chat:7", "back again");
    expect((await listed("chat:7"))?.archivedAt).toBeNull();
    await gateway.api("PATCH", "/api/channels/chat:7", { archived: true });
    const restored = await gateway.api<{ channel: ChannelRecord }>(
      "PATCH",
      "/api/channels/chat:7",
      { archived: false },
    );
    expect(restored.body.channel.archivedAt).toBeNull();
  });

  it("refuses an unknown channel, an empty change and a bad value with one line", async () => {
    const unknown = await gateway.api<{ error: string }>("PATCH", "/api/channels/nowhere", {
      archived: true,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("no channel nowhere");
    const empty = await gateway.api<{ error: string }>("PATCH", "/api/channels/chat:7", {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe("nothing to change: give title or archived");
    const long = await gateway.api<{ error: string }>("PATCH", "/api/channels/chat:7", {
      title: "x".repeat(121),
    });
    expect(long.status).toBe(400);
    expect(long.body.error).toContain("title must be at most 120 characters");
    const wrong = await gateway.api<{ error: string }>("PATCH", "/api/channels/chat:7", {
      archived: "yes",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toContain("archived must be true or false");
  });
});
