/**
 * Who may talk, per binding: a binding's `allow` (user ids, chat ids, `role:<id>`) decides for
 * the channels it matches in place of the source's allow-list, read at each message (a reload
 * applies to the next one). Driven through the kit's `ChatSource` with a fake platform, the
 * gateway's real bindings from a checked configuration and the kit's in-memory store.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatSource } from "../../../src/channels/kit/chat-source.js";
import { memorySourceStore } from "../../../src/channels/kit/memory-source-store.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { GatewayBindings } from "../../../src/gateway/bindings/bindings.js";
import { checkGatewayConfig } from "../../../src/gateway/bindings/load-gateway-config.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import { busSourceContext } from "../../helpers/bus-source-context.js";
import { FakeChatPlatform } from "../../helpers/fake-chat-platform.js";
import { waitFor } from "../../helpers/wait-for.js";

const CONFIG_FILE = join("/nonexistent", "config.json");

function configWith(bindings: unknown[]) {
  const loaded = checkGatewayConfig(CONFIG_FILE, { bindings });
  if (loaded instanceof Error) throw loaded;
  return loaded;
}

const bindings = new GatewayBindings(
  configWith([
    { name: "team", match: ["fake:-100*"], allow: ["-100500", "42", "role:900"] },
    { name: "private", match: ["fake:3*"], allow: ["31"] },
  ]),
  { cwd: "/tmp", engine: "rudder" },
);
const platform = new FakeChatPlatform();
const store = memorySourceStore();
const bus = new EventBus();
const permissions = new PermissionRequests({ bus });
const closing = new AbortController();
const delivered: Array<{ channelId: string; text: string }> = [];
const source = new ChatSource({ platform, allow: ["7"] });

beforeAll(async () => {
  await source.start(
    async (channelId, text) => {
      delivered.push({ channelId, text });
      return { id: `message-${delivered.length}`, disposition: "started" };
    },
    busSourceContext(bus, {
      permissions,
      signal: closing.signal,
      store,
      allowFor: (channelId) => bindings.bindingFor(channelId).allow,
    }),
  );
});

afterAll(async () => {
  await source.stop();
  permissions.close();
});

/** A message in group `chatId` from `userId`, addressed to the bot. */
const inGroup = (chatId: string, userId: string, text: string, roles?: string[]) =>
  platform.incoming(userId, text, {
    channelId: `fake:${chatId}`,
    chatId,
    group: true,
    ...(roles ? { roles } : {}),
  });

/** What the kit recorded and has not sent yet (answers are recorded before `push` resolves). */
const unsentTo = async (channelId: string) =>
  (await store.outbound.unsent("fake")).filter((entry) => entry.channelId === channelId);

describe("a binding's allow-list", () => {
  it("lets in its users, its chats and its roles, in place of the source's list", async () => {
    await platform.push(inGroup("-100600", "42", "by user id"));
    await platform.push(inGroup("-100600", "55", "by role", ["111", "900"]));
    await platform.push(inGroup("-100500", "56", "by chat id"));
    await platform.push(inGroup("-100600", "7", "the source's own user, not on the binding's"));
    await platform.push(inGroup("-100600", "57", "a stranger with other roles", ["111"]));
    await platform.push(platform.incoming("7", "the source's user where no binding says"));
    expect(delivered.map((item) => item.text)).toEqual([
      "by user id",
      "by role",
      "by chat id",
      "the source's user where no binding says",
    ]);
  });

  it("ignores a stranger in a bound group, offering no code", async () => {
    await platform.push(inGroup("-100700", "58", "hello?"));
    const channel = "fake:-100700";
    expect(platform.sent.filter((sent) => sent.channelId === channel)).toEqual([]);
    expect(await unsentTo(channel)).toEqual([]);
    expect(await store.pairings.list("fake")).toEqual([]);
  });

  it("offers a stranger in a bound direct chat a code that lets them in there", async () => {
    await platform.push(platform.incoming("32", "may I?"));
    const offer = await waitFor(
      () => platform.sent.find((sent) => sent.channelId === "fake:32"),
      "the pairing code",
    );
    const code = /pairing code: ([A-Z0-9]{8})/.exec(offer.message.text)?.[1];
    expect(code).toBeDefined();
    await platform.push(platform.incoming("7", `/pair ${code}`));
    await platform.push(platform.incoming("32", "now?"));
    expect(delivered.at(-1)).toEqual({ channelId: "fake:32", text: "now?" });
    // Their approval is for their own chat: a bound group does not let them in.
    await platform.push(inGroup("-100600", "32", "and here?"));
    expect(delivered.at(-1)?.text).toBe("now?");
  });

  it("applies a reloaded configuration to the next message", async () => {
    await platform.push(inGroup("-100800", "59", "before"));
    bindings.replace(configWith([{ name: "team", match: ["fake:-100*"], allow: ["59"] }]));
    await platform.push(inGroup("-100800", "59", "after"));
    expect(delivered.at(-1)?.text).toBe("after");
    expect(delivered.some((item) => item.text === "before")).toBe(false);
  });

  it("is refused in the configuration unless it is a list of ids", () => {
    const error = checkGatewayConfig(CONFIG_FILE, {
      bindings: [{ name: "team", match: ["fake:*"], allow: ["42", 43] }],
    });
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("bindings[0].allow[1]");
  });
});
