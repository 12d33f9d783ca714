/**
 * The Discord platform in process, on the fake Discord: a Message Content intent the portal
 * has not enabled (close 4014) and a refused token each end receiving with one clear line;
 * kit messages rendered for Discord (markdown as it is, plain text escaped, no mention pings,
 * buttons in rows, replies that survive a deleted message); channel ids and snowflake times;
 * the configuration's one-line errors, which never hold the token; files sent as attachments
 * (multipart, the caption the message's text, in the thread, replying); a catch-up read tried
 * again after a 5xx or a 429.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addressOf,
  channelIdOf,
  snowflakeAt,
} from "../../../src/channels/discord/discord-address.js";
import { catchUp } from "../../../src/channels/discord/discord-catch-up.js";
import { discordConfig } from "../../../src/channels/discord/discord-config.js";
import { withoutMention } from "../../../src/channels/discord/discord-incoming.js";
import { DiscordPlatform } from "../../../src/channels/discord/discord-platform.js";
import {
  escapeDiscordMarkdown,
  renderMessage,
} from "../../../src/channels/discord/discord-render.js";
import { MISSING_INTENT_TEXT } from "../../../src/channels/discord/discord-session.js";
import type { OutgoingChat, PlatformHandlers } from "../../../src/channels/kit/chat-platform.js";
import { type FakeDiscord, startFakeDiscord } from "../../helpers/fake-discord.js";

let discord: FakeDiscord;
let folder: string;

beforeAll(async () => {
  discord = await startFakeDiscord();
  folder = mkdtempSync(join(tmpdir(), "rudder-discord-unit-"));
});

afterAll(async () => {
  await discord?.close();
  rmSync(folder, { recursive: true, force: true });
});

function recorder() {
  const lines: string[] = [];
  const refused: number[] = [];
  const handlers: PlatformHandlers = {
    message: async () => undefined,
    button: async () => undefined,
    badToken: (status) => refused.push(status),
    log: (line) => lines.push(line),
  };
  return { lines, refused, handlers };
}

const noChannels = { knownChannels: async () => [] };

describe("connecting", () => {
  it("says in one line that the Message Content intent is not enabled, and stops", async () => {
    discord.messageContent = false;
    try {
      const platform = new DiscordPlatform({ token: discord.token, apiUrl: discord.apiUrl });
      const { lines, refused, handlers } = recorder();
      await platform.receive(handlers, AbortSignal.timeout(20_000), noChannels);
      expect(lines).toContain(MISSING_INTENT_TEXT);
      expect(MISSING_INTENT_TEXT).toMatch(/Message Content Intent/);
      expect(refused).toEqual([]);
    } finally {
      discord.messageContent = true;
    }
  });

  it("reports a refused token as such, and stops", async () => {
    const platform = new DiscordPlatform({ token: "not.the.token", apiUrl: discord.apiUrl });
    const { lines, refused, handlers } = recorder();
    await platform.receive(handlers, AbortSignal.timeout(20_000), noChannels);
    expect(refused).toEqual([401]);
    expect(lines.join("\n")).not.toContain("not.the.token");
  });

  it("reads a 429 as transient with Discord's retry_after, a 401 as a bad token", async () => {
    const platform = new DiscordPlatform({ token: discord.token, apiUrl: discord.apiUrl });
    const dm = discord.dm("4242");
    discord.failNext(/POST \/channels\/\d+\/messages$/, { status: 429, retryAfterSeconds: 2 });
    const channelId = channelIdOf({ guild: "dm", channel: dm, thread: dm });
    const limited = await platform
      .send(channelId, { text: "hi", format: "plain" }, AbortSignal.timeout(5000))
      .catch((error: unknown) => error);
    const failure = platform.failure(limited);
    expect(failure.kind).toBe("transient");
    expect(failure.kind === "transient" && failure.retryAfterMs).toBeGreaterThanOrEqual(2000);
    discord.failNext(/POST \/channels\/\d+\/messages$/, { status: 401 });
    const refused = await platform
      .send(channelId, { text: "hi", format: "plain" }, AbortSignal.timeout(5000))
      .catch((error: unknown) => error);
    expect(platform.failure(refused).kind).toBe("bad_token");
    expect(platform.redact(`token ${discord.token} here`)).toBe("token [token] here");
  });
});

describe("catch-up", () => {
  it("reads a channel again after a 500 and a 429, and hands over what was said", async () => {
    const platform = new DiscordPlatform({ token: discord.token, apiUrl: discord.apiUrl });
    const dm = discord.dm("4246");
    const since = new Date(Date.now() - 1000).toISOString();
    const said = discord.say({ userId: "4246", channelId: dm, text: "while away", quiet: true });
    const read = /GET \/channels\/\d+\/messages$/;
    discord.failNext(read, { status: 500 });
    discord.failNext(read, { status: 429, retryAfterSeconds: 0.2 });
    const handed: string[] = [];
    const lines: string[] = [];
    const known = [{ channelId: `discord:dm:${dm}:${dm}`, lastMessageAt: since }];
    await catchUp(
      known,
      await platform.rest(),
      async (message) => void handed.push(message.id),
      (line) => lines.push(line),
    );
    expect(handed).toEqual([said.id]);
    expect(lines).toEqual(["discord: caught up: 1 message(s) read back from 1 channel(s)"]);
  });
});

describe("acknowledgements", () => {
  it("reacts to the message and resolves to its id; typing resolves", async () => {
    const platform = new DiscordPlatform({ token: discord.token, apiUrl: discord.apiUrl });
    const dm = discord.dm("4245");
    const said = discord.say({ userId: "4245", channelId: dm, text: "hi", quiet: true });
    const channelId = channelIdOf({ guild: "dm", channel: dm, thread: dm });
    const acknowledgement: OutgoingChat = {
      text: "Waits",
      format: "plain",
      replyTo: said.id,
      reaction: "\u23F3",
    };
    await expect(
      platform.send(channelId, acknowledgement, AbortSignal.timeout(5000)),
    ).resolves.toBe(said.id);
    expect(discord.reactions.filter((each) => each.messageId === said.id)).toEqual([
      { channelId: dm, messageId: said.id, emoji: "\u23F3" },
    ]);
    await expect(platform.typing(channelId)).resolves.toBeUndefined();
  });
});

describe("files out", () => {
  const platform = () => new DiscordPlatform({ token: discord.token, apiUrl: discord.apiUrl });
  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

  it("attaches the file to a message in the thread, the caption its text, replying", async () => {
    const mention = discord.say({
      userId: "4243",
      channelId: discord.channelId,
      text: "draw me something",
      mention: true,
      quiet: true,
    });
    const channelId = channelIdOf({
      guild: discord.guildId,
      channel: discord.channelId,
      thread: mention.id,
    });
    const id = await platform().sendFile(
      channelId,
      {
        name: "chart.png",
        mediaType: "image/png",
        data: PNG,
        caption: "Here is **the chart**",
        replyTo: mention.id,
      },
      AbortSignal.timeout(10_000),
    );
    const sent = discord.sent.find((message) => message.id === id);
    expect(discord.threadsStarted).toContain(mention.id);
    expect(sent).toMatchObject({
      channelId: mention.id,
      text: "Here is **the chart**",
      replyTo: mention.id,
    });
    expect(sent?.files).toEqual([{ name: "chart.png", contentType: "image/png", data: PNG }]);
  });

  it("sends a long caption first, its last part with the file; a file alone needs none", async () => {
    const dm = discord.dm("4244");
    const channelId = channelIdOf({ guild: "dm", channel: dm, thread: dm });
    const caption = `${"a line of the caption\n".repeat(120)}the end`;
    const id = await platform().sendFile(
      channelId,
      { name: "notes.txt", mediaType: "text/plain", data: Buffer.from("notes"), caption },
      AbortSignal.timeout(10_000),
    );
    const inDm = discord.sent.filter((message) => message.channelId === dm);
    expect(inDm.length).toBe(2);
    expect(inDm.map((message) => message.text).join("\n")).toBe(caption);
    expect(inDm[0]?.files).toEqual([]);
    expect(inDm[1]?.id).toBe(id);
    expect(inDm[1]?.text).toMatch(/the end$/);
    expect(inDm[1]?.files.map((file) => file.data.toString())).toEqual(["notes"]);
    const alone = await platform().sendFile(
      channelId,
      { name: "data.bin", mediaType: "application/octet-stream", data: Buffer.from([0, 1]) },
      AbortSignal.timeout(10_000),
    );
    const sent = discord.sent.find((message) => message.id === alone);
    expect(sent?.text).toBe("");
    expect(sent?.files[0]).toMatchObject({
      name: "data.bin",
      contentType: "application/octet-stream",
    });
  });
});

describe("rendering", () => {
  it("sends markdown as it is, escapes plain text, and never pings", () => {
    const markdown = renderMessage({
      text: "**bold** and `code`\n```ts\nx\n```",
      format: "markdown",
    });
    expect(markdown.content).toBe("**bold** and `code`\n```ts\nx\n```");
    expect(markdown.allowed_mentions).toEqual({ parse: [], replied_user: false });
    const plain = renderMessage({
      text: "Ada (@ada_b) said *hi* > no\n# not a heading",
      format: "plain",
    });
    expect(plain.content).toBe("Ada (@ada\\_b) said \\*hi\\* > no\n\\# not a heading");
    expect(escapeDiscordMarkdown("a|b~c`d\\e")).toBe("a\\|b\\~c\\`d\\\\e");
  });

  it("puts buttons in rows of at most five and replies without failing on a deleted message", () => {
    const six = Array.from({ length: 6 }, (_, index) => ({
      label: `b${index}`,
      data: `d${index}`,
    }));
    const body = renderMessage({ text: "pick", format: "plain", buttons: [six], replyTo: "42" });
    expect(body.components?.map((row) => row.components.length)).toEqual([5, 1]);
    expect(body.components?.[0]?.components[0]).toEqual({
      type: 2,
      style: 2,
      label: "b0",
      custom_id: "d0",
    });
    expect(body.message_reference).toEqual({ message_id: "42", fail_if_not_exists: false });
    expect(renderMessage({ text: "x", format: "plain", buttons: [] }).components).toEqual([]);
  });
});

describe("channels", () => {
  it("names guild threads and DMs, and reads them back", () => {
    const thread = channelIdOf({ guild: "1", channel: "2", thread: "3" });
    expect(thread).toBe("discord:1:2:3");
    expect(addressOf(thread)).toEqual({ guild: "1", channel: "2", thread: "3" });
    expect(addressOf("discord:dm:5:5")).toEqual({ guild: "dm", channel: "5", thread: "5" });
    expect(addressOf("discord:1:2")).toBeNull();
    expect(addressOf("telegram:1:2:3")).toBeNull();
    expect(withoutMention("<@77> hello <@!77>", "77")).toBe("hello");
  });

  it("turns a time into the least snowflake of that moment", () => {
    const time = Date.parse("2026-01-01T00:00:00Z");
    const id = BigInt(snowflakeAt(time));
    expect(Number(id >> 22n) + 1_420_070_400_000).toBe(time);
    expect(id & ((1n << 22n) - 1n)).toBe(0n);
  });
});

describe("configuration", () => {
  it("takes the token from a file, the section or the environment, and user, channel and role ids", () => {
    const file = join(folder, "token");
    writeFileSync(file, "abc.def.ghi\n");
    expect(discordConfig({ tokenFile: file, allow: "1, role:2", env: {} })).toEqual({
      token: "abc.def.ghi",
      allow: ["1", "role:2"],
    });
    expect(
      discordConfig({
        section: { token: "abc.def", allow: ["3"] },
        env: { RUDDER_DISCORD_API_URL: "http://127.0.0.1:9/api" },
      }),
    ).toEqual({ token: "abc.def", allow: ["3"], apiUrl: "http://127.0.0.1:9/api" });
    expect(discordConfig({ env: { RUDDER_DISCORD_TOKEN: "x.y" } })).toEqual({
      token: "x.y",
      allow: [],
    });
    expect(discordConfig({ env: {} })).toBeNull();
  });

  it("refuses what is malformed in one line that never holds the token", () => {
    const errors = [
      discordConfig({ allow: "1", env: {} }),
      discordConfig({ tokenFile: join(folder, "missing"), env: {} }),
      discordConfig({ section: { token: "abc.def", allow: ["ada"] }, env: {} }),
      discordConfig({ section: { token: "abc.def", channels: [] }, env: {} }),
      discordConfig({ section: { token: "secret token!" }, env: {} }),
      discordConfig({ env: { RUDDER_DISCORD_TOKEN: "a.b", RUDDER_DISCORD_API_URL: "ftp://x" } }),
    ];
    for (const error of errors) {
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).not.toContain("\n");
      expect((error as Error).message).not.toContain("secret");
    }
    expect((errors[0] as Error).message).toMatch(/--discord-token-file/);
    expect((errors[3] as Error).message).toMatch(/discord\.channels/);
  });
});
