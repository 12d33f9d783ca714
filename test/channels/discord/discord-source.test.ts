/**
 * The Discord source in process against the fake Discord (discord.js unchanged, REST and
 * gateway on loopback), with the gateway's real event bus, permission requests and media
 * handling (`ChannelMedia` over a temporary workspace) and a recording `deliver` in place of the
 * router. One fake and one source for the file: each case speaks in a place of its own.
 * Attachments are downloaded through Discord into the workspace's inbox (an image as the marker
 * the agent process turns into an image block); a mention in a forum post makes the post the
 * conversation; a `role:<id>` allow entry lets in a member with the role and no one else, a
 * channel's id everyone in its threads; commands typed as text are taken as the slash commands
 * are; a turn's status message is edited at most once in 1.2 s, an edit's 429 waited out; a
 * reply's files reach Discord as attachments in the thread, through the reply ledger.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiscordChannelSource } from "../../../src/channels/discord/discord-source.js";
import { memorySourceStore } from "../../../src/channels/kit/memory-source-store.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import type { DeliveryMeta } from "../../../src/gateway/channel-source.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import type { GatewayEvent, SentFile, StoredMessage } from "../../../src/gateway/events.js";
import { ChannelMedia } from "../../../src/gateway/media/channel-media.js";
import { busSourceContext } from "../../helpers/bus-source-context.js";
import { type FakeDiscord, startFakeDiscord } from "../../helpers/fake-discord.js";
import { waitFor } from "../../helpers/wait-for.js";

const ADA = "311111111111111111";
const MEMBER = "322222222222222222";
const OUTSIDER = "333333333333333333";
const ROLE = "344444444444444444";
/** A 1x1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

let discord: FakeDiscord;
let source: DiscordChannelSource;
let workspace: string;
const bus = new EventBus();
const permissions = new PermissionRequests({ bus });
const closing = new AbortController();
const delivered: Array<{ channelId: string; text: string; meta?: DeliveryMeta }> = [];
const logs: string[] = [];
const outFiles = new Map<string, Buffer>();
let routeSlowly = () => {};
const slowRoute = new Promise<void>((resolve) => {
  routeSlowly = resolve;
});

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), "rudder-discord-source-"));
  discord = await startFakeDiscord();
  source = new DiscordChannelSource({
    token: discord.token,
    apiUrl: discord.apiUrl,
    allow: [ADA, `role:${ROLE}`, discord.forumId],
    backoff: { initialMs: 20, maxMs: 200 },
    logger: (line) => logs.push(line),
  });
  await source.start(
    async (channelId, text, meta, stored) => {
      delivered.push({ channelId, text, meta });
      stored?.();
      // Stored, then routed slowly (agents starting on a busy machine).
      if (text === "routed slowly") await slowRoute;
      return { id: `message-${delivered.length}`, disposition: "started" };
    },
    busSourceContext(bus, {
      permissions,
      signal: closing.signal,
      store: memorySourceStore(),
      attachments: new ChannelMedia({ workspaceFor: async () => workspace }),
      readSentFile: async (_channelId, file) => outFiles.get(file.path) as Buffer,
    }),
  );
  await waitFor(
    () => logs.some((line) => line.includes("connected as @rudder")),
    () => logs.join("\n"),
  );
});

afterAll(async () => {
  routeSlowly();
  closing.abort();
  await source?.stop();
  permissions.close();
  await discord?.close();
  rmSync(workspace, { recursive: true, force: true });
});

const deliveredTo = (channelId: string, pattern: RegExp = /./) =>
  waitFor(
    () => delivered.find((each) => each.channelId === channelId && pattern.test(each.text)),
    () =>
      `a delivery to ${channelId} matching ${pattern}: ${JSON.stringify(delivered)}\n${logs.join("\n")}`,
  );

function reply(channelId: string, text: string, files?: SentFile[]): void {
  const message: StoredMessage = {
    id: `reply-${Math.random()}`,
    channelId,
    role: "assistant",
    text,
    state: null,
    replyTo: null,
    kind: "reply",
    createdAt: new Date().toISOString(),
    ...(files ? { files } : {}),
  };
  bus.publish({ type: "reply", channelId, message });
}

describe("Discord source", () => {
  it("downloads attachments into the workspace's inbox, an image as one the model sees", async () => {
    const dm = discord.dm(ADA);
    discord.say({
      userId: ADA,
      channelId: dm,
      text: "look at these",
      attachments: [
        { name: "notes.txt", body: Buffer.from("remember the milk"), contentType: "text/plain" },
        { name: "pixel.png", body: PNG, contentType: "image/png" },
      ],
    });
    const delivery = await deliveredTo(`discord:dm:${dm}:${dm}`);
    expect(delivery.text).toMatch(/^look at these\n/);
    expect(delivery.text).toContain("[attached file: inbox/notes.txt (17 bytes, text/plain)]");
    // The image goes with the message as an attachment (shown to the model), not as a line.
    expect(delivery.text).not.toContain("pixel.png");
    expect(delivery.meta?.attachments).toEqual([
      { kind: "file", path: "inbox/notes.txt", mediaType: "text/plain", size: 17 },
      { kind: "image", path: "inbox/pixel.png", mediaType: "image/png", size: PNG.length },
    ]);
    expect(readFileSync(join(workspace, "inbox", "notes.txt"), "utf8")).toBe("remember the milk");
    expect(readFileSync(join(workspace, "inbox", "pixel.png"))).toEqual(PNG);
  });

  it("takes a mention in a forum post as a conversation in the post, mentions after it not needed", async () => {
    const quiet = discord.post({ userId: ADA, title: "no mention", text: "just a post" });
    const post = discord.post({
      userId: ADA,
      title: "Build fails",
      text: "why does the build fail?",
      mention: true,
    });
    const channelId = `discord:${discord.guildId}:${discord.forumId}:${post.channel_id}`;
    const delivery = await deliveredTo(channelId);
    expect(delivery.text).toBe("why does the build fail?");
    // Taken in order: by the time the mention was delivered, the post without one was passed over.
    expect(delivered.some((each) => each.channelId.endsWith(`:${quiet.channel_id}`))).toBe(false);
    discord.say({ userId: ADA, channelId: post.channel_id, text: "it says ENOENT" });
    await deliveredTo(channelId, /ENOENT/);
    reply(channelId, "The answer, in the post");
    await waitFor(
      () =>
        discord.sent.find(
          (sent) => sent.channelId === post.channel_id && /in the post/.test(sent.text),
        ),
      "the answer in the post",
    );
    expect(discord.sent.filter((sent) => sent.channelId === discord.forumId)).toEqual([]);
  });

  it("lets in a member with an allowed role, and not one without it", async () => {
    const outsider = discord.say({
      userId: OUTSIDER,
      channelId: discord.channelId,
      text: "may I?",
      mention: true,
      roles: ["355555555555555555"],
    });
    const member = discord.say({
      userId: MEMBER,
      channelId: discord.channelId,
      text: "I have the role",
      mention: true,
      roles: [ROLE],
    });
    await deliveredTo(`discord:${discord.guildId}:${discord.channelId}:${member.id}`);
    expect(delivered.some((each) => each.channelId.endsWith(`:${outsider.id}`))).toBe(false);
    expect(discord.threadsStarted).not.toContain(outsider.id);
  });

  it("lets in anyone in an allowed channel's threads, and no one else there", async () => {
    const post = discord.post({
      userId: OUTSIDER,
      title: "From outside",
      text: "in the allowed forum",
      mention: true,
    });
    await deliveredTo(`discord:${discord.guildId}:${discord.forumId}:${post.channel_id}`);
    const elsewhere = discord.say({
      userId: OUTSIDER,
      channelId: discord.channelId,
      text: "and in the text channel?",
      mention: true,
    });
    // Taken in order: a DM after it shows it was passed over.
    const dm = discord.dm(ADA);
    discord.say({ userId: ADA, channelId: dm, text: "after the outsider" });
    await deliveredTo(`discord:dm:${dm}:${dm}`, /after the outsider/);
    expect(delivered.some((each) => each.channelId.endsWith(`:${elsewhere.id}`))).toBe(false);
  });

  it("takes the commands typed as text: answers /help here, hands /compact to the gateway", async () => {
    const dm = discord.dm(ADA);
    discord.say({ userId: ADA, channelId: dm, text: "/help" });
    await waitFor(
      () =>
        discord.sent.find(
          (each) => each.channelId === dm && /This chat talks to a coding agent/.test(each.text),
        ),
      () => `the /help answer; ${logs.join("\n")}`,
    );
    expect(delivered.some((each) => each.text === "/help")).toBe(false);
    discord.say({ userId: ADA, channelId: dm, text: "/compact the plan" });
    await deliveredTo(`discord:dm:${dm}:${dm}`, /^\/compact the plan$/);
  });

  it("edits the turn's status message at most once in 1.2 s, waiting out an edit's 429", async () => {
    const dm = discord.dm(ADA);
    const channelId = `discord:dm:${dm}:${dm}`;
    discord.say({ userId: ADA, channelId: dm, text: "work" });
    await deliveredTo(channelId, /^work$/);
    const publish = (event: Record<string, unknown>) =>
      bus.publish({ channelId, ...event } as GatewayEvent);
    discord.failNext(/PATCH \/channels\/\d+\/messages\/\d+$/, {
      status: 429,
      retryAfterSeconds: 1,
    });
    for (const [index, command] of ["make", "make test"].entries()) {
      const toolUseId = `t${index}`;
      publish({ type: "tool_start", toolUseId, name: "bash", input: { command } });
      publish({ type: "tool_end", toolUseId, name: "bash", content: "ok", isError: false });
    }
    publish({ type: "turn_end", outcome: {} });
    const status = await waitFor(
      () => discord.sent.find((each) => each.channelId === dm && /^Done: 2 steps/.test(each.text)),
      () =>
        `the status closed: ${JSON.stringify(discord.sent.filter((each) => each.channelId === dm))}`,
    );
    expect(status.text).toContain("make test");
    // One edit refused with the 429 and tried again: a call more than the edits that landed.
    const patches = discord.calls.filter(
      (call) => call.method === "PATCH" && call.path.endsWith(`/${status.id}`),
    );
    expect(patches).toHaveLength(status.edits.length);
    const times = status.edits.map((edit) => edit.at);
    expect(times.length).toBeGreaterThanOrEqual(2);
    for (let index = 1; index < times.length; index++) {
      expect((times[index] ?? 0) - (times[index - 1] ?? 0)).toBeGreaterThanOrEqual(1100);
    }
  });

  it("stores the next message while the one before is still being routed", async () => {
    const dm = discord.dm(ADA);
    discord.say({ userId: ADA, channelId: dm, text: "routed slowly" });
    await deliveredTo(`discord:dm:${dm}:${dm}`, /^routed slowly$/);
    // Said meanwhile: held behind that routing, unstored, a kill would lose it for good (a
    // first mention or DM is not read back).
    const mention = discord.say({
      userId: ADA,
      channelId: discord.channelId,
      text: "meanwhile",
      mention: true,
    });
    await deliveredTo(`discord:${discord.guildId}:${discord.channelId}:${mention.id}`);
    routeSlowly();
  });

  it("sends a reply's files into the thread as attachments, through the reply ledger", async () => {
    const mention = discord.say({
      userId: ADA,
      channelId: discord.channelId,
      text: "chart it",
      mention: true,
    });
    const channelId = `discord:${discord.guildId}:${discord.channelId}:${mention.id}`;
    await deliveredTo(channelId);
    outFiles.set("out/chart.png", PNG);
    reply(channelId, "Here it is.", [
      {
        path: "out/chart.png",
        name: "chart.png",
        mediaType: "image/png",
        size: PNG.length,
        caption: "the **chart**",
      },
    ]);
    const sent = await waitFor(
      () => discord.sent.find((each) => each.channelId === mention.id && each.files.length > 0),
      () => `the file in the thread; ${logs.join("\n")}`,
    );
    expect(sent.text).toBe("the **chart**");
    expect(sent.files).toEqual([{ name: "chart.png", contentType: "image/png", data: PNG }]);
    const texts = discord.sent
      .filter((each) => each.channelId === mention.id)
      .map((each) => each.text);
    expect(texts.indexOf("Here it is.")).toBeLessThan(texts.indexOf("the **chart**"));
  });
});
