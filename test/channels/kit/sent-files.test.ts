/**
 * Files out through the kit: a reply's `files` are recorded in the reply ledger after the
 * answer and sent with the platform's `sendFile`, their bytes read through the gateway's
 * `readSentFile`; a platform without `sendFile` gets one line naming the file and where it is
 * in the workspace; a file that cannot be read any more gets a line saying why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutgoingFile } from "../../../src/channels/kit/chat-platform.js";
import { ChatSource } from "../../../src/channels/kit/chat-source.js";
import { memorySourceStore } from "../../../src/channels/kit/memory-source-store.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import type { SentFile, StoredMessage } from "../../../src/gateway/events.js";
import type { SourceStore } from "../../../src/gateway/store/source-store.js";
import { busSourceContext } from "../../helpers/bus-source-context.js";
import { FakeChatPlatform } from "../../helpers/fake-chat-platform.js";
import { waitFor } from "../../helpers/wait-for.js";

class FilePlatform extends FakeChatPlatform {
  readonly files: Array<{ channelId: string; file: OutgoingFile }> = [];
  /** Sends and files in the order they went out. */
  readonly order: string[] = [];

  override async send(...args: Parameters<FakeChatPlatform["send"]>): Promise<string> {
    this.order.push(`text:${args[1].text}`);
    return super.send(...args);
  }

  async sendFile(channelId: string, file: OutgoingFile): Promise<string> {
    this.files.push({ channelId, file });
    this.order.push(`file:${file.name}`);
    return `file-${this.files.length}`;
  }
}

const bus = new EventBus();
const permissions = new PermissionRequests({ bus });
const closing = new AbortController();
const workspace = new Map<string, Buffer>([["out/chart.png", Buffer.from("png bytes")]]);
const sources: ChatSource[] = [];

async function startSource(platform: FakeChatPlatform, store: SourceStore): Promise<void> {
  const source = new ChatSource({ platform, allow: ["7"] });
  sources.push(source);
  await source.start(
    async () => ({ id: "m", disposition: "started" }),
    busSourceContext(bus, {
      channelIds: async () => [`${platform.name}:7`],
      permissions,
      signal: closing.signal,
      store,
      readSentFile: async (_channelId, file) => {
        const data = workspace.get(file.path);
        if (!data) throw new Error(`${file.path} is no longer in the workspace`);
        return data;
      },
    }),
  );
}

function reply(channelId: string, id: string, files: SentFile[]): void {
  const message: StoredMessage = {
    id,
    channelId,
    role: "assistant",
    text: "Here is the chart.",
    state: null,
    replyTo: null,
    kind: "reply",
    createdAt: new Date().toISOString(),
    files,
  };
  bus.publish({ type: "reply", message, channelId });
}

const chart: SentFile = {
  path: "out/chart.png",
  name: "chart.png",
  mediaType: "image/png",
  size: 9,
  caption: "the **chart**",
};

afterAll(async () => {
  for (const source of sources) await source.stop();
  permissions.close();
});

describe("a platform with sendFile", () => {
  const platform = new FilePlatform("files");
  const store = memorySourceStore();
  beforeAll(() => startSource(platform, store));

  it("sends the answer, then the file read from the workspace, both through the ledger", async () => {
    reply("files:7", "reply-1", [chart]);
    const sent = await waitFor(() => platform.files[0], "the file sent");
    expect(sent.channelId).toBe("files:7");
    expect(sent.file).toEqual({
      name: "chart.png",
      mediaType: "image/png",
      data: Buffer.from("png bytes"),
      caption: "the **chart**",
    });
    expect(platform.order).toEqual(["text:Here is the chart.", "file:chart.png"]);
    const entries = await store.outbound.unsent("files");
    expect(entries).toEqual([]);
  });

  it("tells the chat why when the file cannot be read any more", async () => {
    const gone = { ...chart, path: "out/gone.png", name: "gone.png", caption: undefined };
    reply("files:7", "reply-2", [gone]);
    const line = await waitFor(
      () => platform.sent.find((sent) => /gone\.png/.test(sent.message.text)),
      "the line about the gone file",
    );
    expect(line.message.text).toBe(
      "The agent sent a file, gone.png (9 bytes), in its workspace at out/gone.png, but it could not be sent here: out/gone.png is no longer in the workspace",
    );
  });
});

describe("a platform without sendFile", () => {
  const platform = new FakeChatPlatform("plain");
  beforeAll(() => startSource(platform, memorySourceStore()));

  it("gets one line naming the file and its place in the workspace", async () => {
    reply("plain:7", "reply-3", [chart]);
    const line = await waitFor(
      () => platform.sent.find((sent) => /chart\.png/.test(sent.message.text)),
      "the line about the file",
    );
    expect(line.message.text).toBe(
      "The agent made a file: chart.png (9 bytes), in its workspace at out/chart.png.\nthe **chart**",
    );
    expect(platform.sent.map((sent) => sent.message.text)[0]).toBe("Here is the chart.");
  });
});
