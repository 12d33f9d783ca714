/**
 * "Allow always here" pressed on a chat's card covers the next same call through the gateway's
 * own check: the kit stores the grant in the store the gateway's permission requests read
 * (wired as the gateway wires them), so the next request is allowed before any person is asked:
 * no second `permission_request`, no second card. Through the kit's `ChatSource` with a fake
 * platform and the gateway's real `PermissionRequests`.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { ChatSource } from "../../../src/channels/kit/chat-source.js";
import { memorySourceStore } from "../../../src/channels/kit/memory-source-store.js";
import type { PermissionRequest } from "../../../src/claude-cli/permission-request.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import { busSourceContext } from "../../helpers/bus-source-context.js";
import { FakeChatPlatform } from "../../helpers/fake-chat-platform.js";
import { waitFor } from "../../helpers/wait-for.js";

const platform = new FakeChatPlatform();
const store = memorySourceStore();
const bus = new EventBus();
// As src/gateway/startup/agent-runtime.ts: the grants are the store's, as the sources' are.
const permissions = new PermissionRequests({ bus, grants: store.grants });
const closing = new AbortController();
const source = new ChatSource({ platform, allow: ["7"] });
const requested: string[] = [];

beforeAll(async () => {
  await source.start(
    async () => ({ id: "message-1", disposition: "started" }),
    busSourceContext(bus, {
      permissions,
      signal: closing.signal,
      store,
    }),
  );
  bus.subscribe("fake:7", (numbered) => {
    if (numbered.event.type === "permission_request") requested.push(numbered.event.request.id);
  });
});

afterAll(async () => {
  await source.stop();
  permissions.close();
});

const removal = (requestId: string): PermissionRequest => ({
  requestId,
  toolName: "Bash",
  input: { command: "rm victim.txt" },
  toolUseId: undefined,
  raw: {},
});

const cards = () => platform.sent.filter((each) => (each.message.buttons ?? []).length > 0);

it("allows the same command again without a card once someone pressed Allow always here", async () => {
  // The channel is the kit's once someone allowed speaks in it.
  await platform.push(platform.incoming("7", "delete the victim"));
  const first = permissions.ask("fake:7", removal("r1"));
  const card = await waitFor(() => cards()[0], "the card");
  const always = card.message.buttons?.flat().find((button) => button.data.startsWith("pA:"));
  await platform.press({
    channelId: "fake:7",
    chatId: "7",
    userId: "7",
    userName: "ada",
    data: always?.data ?? "",
    pressId: "press-1",
    messageId: "card-1",
  });
  expect(await first).toMatchObject({ behavior: "allow" });
  expect(await store.grants.list("fake:7")).toMatchObject([
    { toolName: "Bash", command: "rm victim.txt", grantedBy: "ada" },
  ]);

  expect(await permissions.ask("fake:7", removal("r2"))).toEqual({ behavior: "allow" });
  expect(requested).toHaveLength(1);
  expect(cards()).toHaveLength(1);
  // Another command is asked about as before.
  void permissions.ask("fake:7", { ...removal("r3"), input: { command: "rm other.txt" } });
  await waitFor(() => cards()[1], "a card for another command");
  expect(requested).toHaveLength(2);
});
