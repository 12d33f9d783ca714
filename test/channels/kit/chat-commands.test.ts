/**
 * The kit's commands around the gateway's own: `/status` and `/model <name>` go to the channel
 * (the gateway answers them); given words they do not take, the kit says how to write them.
 * Through `ChatSource` with a fake platform.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { ChatSource } from "../../../src/channels/kit/chat-source.js";
import { memorySourceStore } from "../../../src/channels/kit/memory-source-store.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import { busSourceContext } from "../../helpers/bus-source-context.js";
import { FakeChatPlatform } from "../../helpers/fake-chat-platform.js";
import { waitFor } from "../../helpers/wait-for.js";

const platform = new FakeChatPlatform();
const bus = new EventBus();
const permissions = new PermissionRequests({ bus });
const closing = new AbortController();
const delivered: string[] = [];
const source = new ChatSource({ platform, allow: ["7"] });

beforeAll(async () => {
  await source.start(
    async (_channelId, text) => {
      delivered.push(text);
      return { id: `message-${delivered.length}`, disposition: "started" };
    },
    busSourceContext(bus, {
      permissions,
      signal: closing.signal,
      store: memorySourceStore(),
    }),
  );
});

afterAll(async () => {
  await source.stop();
  permissions.close();
});

const answer = (pattern: RegExp) =>
  waitFor(() => platform.sent.find((sent) => pattern.test(sent.message.text)), String(pattern));

it("delivers /status and /model <name> to the channel for the gateway to answer", async () => {
  await platform.push(platform.incoming("7", "/status"));
  await platform.push(platform.incoming("7", "/model claude-haiku-4-5"));
  await platform.push(platform.incoming("7", "/model"));
  expect(delivered).toEqual(["/status", "/model claude-haiku-4-5", "/model"]);
});

it("tells how to write /status and /model when given words they do not take", async () => {
  await platform.push(platform.incoming("7", "/status please"));
  await platform.push(platform.incoming("7", "/model opus and sonnet"));
  await answer(/^\/status takes nothing after it/);
  await answer(/^\/model takes one model name/);
  expect(delivered).toHaveLength(3);
  expect(platform.sent.some((sent) => /not available/.test(sent.message.text))).toBe(false);
});
