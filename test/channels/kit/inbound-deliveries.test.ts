/**
 * `IncomingChat.deliveryKey`: a message the platform delivers twice (a redelivery, a catch-up
 * that reads it again) reaches the gateway once, through the kit's `ChatSource` with a fake
 * platform and a real SQLite store; a claim left by a gateway killed before it stored the
 * message is let go when the file is opened again; a conversation's first answer stored by a
 * gateway killed before it recorded the answer in the reply ledger is sent at the next start;
 * `ReceiveContext.knownChannels` names the source's channels with their last user message.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ChatSource } from "../../../src/channels/kit/chat-source.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";
import { busSourceContext } from "../../helpers/bus-source-context.js";
import { FakeChatPlatform } from "../../helpers/fake-chat-platform.js";
import { type TempFolder, tempFolder } from "../../helpers/temp-folders.js";
import { waitFor } from "../../helpers/wait-for.js";

let folder: TempFolder;
const stops: Array<() => Promise<void>> = [];

beforeEach(() => {
  folder = tempFolder("rudder-kit-deliveries-");
});

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  folder.remove();
});

function openStore(): SqliteGatewayStore {
  const store = new SqliteGatewayStore(join(folder.path, "gateway.db"));
  stops.push(() => store.close());
  return store;
}

async function startKit(store: SqliteGatewayStore, platform = new FakeChatPlatform()) {
  const bus = new EventBus();
  const permissions = new PermissionRequests({ bus });
  const closing = new AbortController();
  const delivered: string[] = [];
  const logs: string[] = [];
  const source = new ChatSource({ platform, allow: ["7"], logger: (line) => logs.push(line) });
  await source.start(
    async (channelId, text) => {
      const message = await store.insertUserMessage(channelId, text, platform.name);
      delivered.push(text);
      return { id: message.id, disposition: "started" };
    },
    busSourceContext(bus, {
      channelIds: async () => (await store.listChannels()).map((channel) => channel.id),
      permissions,
      signal: closing.signal,
      store: store.sourceStore(),
    }),
  );
  stops.push(async () => {
    await source.stop();
    permissions.close();
  });
  return { platform, delivered, logs };
}

describe("a message's delivery key", () => {
  it("answers a message the platform delivers twice once, saying it dropped the second", async () => {
    const kit = await startKit(openStore());
    const message = kit.platform.incoming("7", "deploy the branch", { deliveryKey: "7:42" });
    await kit.platform.push(message);
    await kit.platform.push({ ...message });
    await kit.platform.push(kit.platform.incoming("7", "and then", { deliveryKey: "7:43" }));
    expect(kit.delivered).toEqual(["deploy the branch", "and then"]);
    expect(kit.logs).toContain("fake: message 7:42 was delivered before; dropped");
  });

  it("takes a message again whose gateway was killed after claiming it and before storing it", async () => {
    const first = openStore();
    expect(await first.sourceStore().deliveries.claim("fake", "7:50")).toBe(true);
    expect(await first.sourceStore().deliveries.claim("fake", "7:50")).toBe(false);
    await first.close();
    // Opened again (the gateway restarted): the unfinished claim was a dead gateway's.
    const kit = await startKit(openStore());
    await kit.platform.push(kit.platform.incoming("7", "still there?", { deliveryKey: "7:50" }));
    await kit.platform.push(kit.platform.incoming("7", "still there?", { deliveryKey: "7:50" }));
    expect(kit.delivered).toEqual(["still there?"]);
  });

  it("keeps a finished claim across a restart, so a catch-up that reads the message again drops it", async () => {
    const store = openStore();
    const kit = await startKit(store);
    await kit.platform.push(kit.platform.incoming("7", "once", { deliveryKey: "7:60" }));
    await store.close();
    const again = await startKit(openStore());
    await again.platform.push(again.platform.incoming("7", "once", { deliveryKey: "7:60" }));
    expect(again.delivered).toEqual([]);
  });
});

describe("a gateway killed between storing an answer and recording it", () => {
  it("sends a conversation's first answer at the next start, though its channel has no entry yet", async () => {
    const store = openStore();
    await store.insertUserMessage("fake:1", "first words", "fake:7:Ada");
    await store.insertAgentMessage("fake:1", "echo: first words", "reply");
    const kit = await startKit(store);
    const sent = await waitFor(() =>
      kit.platform.sent.find((each) => each.message.text === "echo: first words"),
    );
    expect(sent.channelId).toBe("fake:1");
  });
});

describe("the receive context", () => {
  it("names the source's channels with history and the time of each one's last user message", async () => {
    const store = openStore();
    await store.insertUserMessage("fake:1", "first", "fake");
    const last = await store.insertUserMessage("fake:1", "second", "fake");
    await store.insertUserMessage("fakeish:9", "another source's", "fakeish");
    await store.insertUserMessage("web:1", "the page's", "http");
    const kit = await startKit(store);
    expect(await kit.platform.context.knownChannels()).toEqual([
      { channelId: "fake:1", lastMessageAt: last.createdAt },
    ]);
  });
});
