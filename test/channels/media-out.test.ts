/**
 * Media out, end to end through the chat kit and the gateway: the fake model calls the
 * `send_file` tool of rudder's channel tools (the MCP server the gateway gives its agents) and
 * the fake Bot API receives the file, a PNG as `sendPhoto`, on rudder's engine (the real Claude
 * Code's case shares media-in.test.ts's gateway: a `sendDocument`). The file is kept with the reply
 * (`GET /api/channels/:id/messages`) and served by `GET /api/channels/:id/files/<path>`, which
 * reads nothing outside the workspace.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRudderGateway, type TestGateway } from "../gateway/helpers.js";
import {
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
  type RecordedRequest,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type FakeTelegramApi, startFakeTelegramApi } from "../helpers/fake-telegram-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { ONE_PIXEL_PNG, telegramTestSource } from "../helpers/telegram-test-source.js";
import { waitFor } from "../helpers/wait-for.js";

const CHANNEL_TOOLS = { command: process.execPath, args: [RUDDER_CLI, "mcp-channel-tools"] };

let root: string;
let messages: FakeMessagesApi;
const gateways: TestGateway[] = [];
const bots: FakeTelegramApi[] = [];

/** Sends the file the message names with send_file, then says what the tool answered. */
function model(request: RecordedRequest) {
  const results = lastToolResults(request);
  if (results.length > 0) return { text: `tool said: ${JSON.stringify(results[0]?.content)}` };
  const text = lastUserText(request);
  const file = /send (\S+)/.exec(text)?.[1];
  if (!file) return { text: "nothing to send" };
  return {
    toolUse: {
      name: "send_file",
      input: { path: file, caption: `the **${file}**` },
    },
  };
}

const telegramSource = (allow: string, bot: FakeTelegramApi) =>
  telegramTestSource(bot, allow, root);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-media-out-"));
  mkdirSync(join(root, "workspace"));
  writeFileSync(join(root, "workspace", "chart.png"), ONE_PIXEL_PNG);
  writeFileSync(join(root, "workspace", "notes.html"), "<script>alert(1)</script>");
  writeFileSync(join(root, "secret.txt"), "outside");
  symlinkSync(join(root, "secret.txt"), join(root, "workspace", "link.txt"));
  messages = await startFakeMessagesApi({ fallback: model });
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.cleanup();
  for (const bot of bots) await bot.close();
  await messages?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("send_file on rudder's engine", () => {
  let gateway: TestGateway;
  let bot: FakeTelegramApi;
  beforeAll(async () => {
    bot = await startFakeTelegramApi();
    bots.push(bot);
    gateway = await startRudderGateway({
      prefix: "media-out",
      apiUrl: messages.url,
      workspace: join(root, "workspace"),
      sources: [telegramSource("111", bot)],
      permissionPrompts: false,
      channelTools: CHANNEL_TOOLS,
    });
    gateways.push(gateway);
  });

  it("sends a PNG as a Telegram photo after the answer, and keeps it with the reply", async () => {
    bot.pushMessage({ userId: 111, text: "please send chart.png" });
    const photo = await waitFor(() => bot.sentFiles[0], "the photo sent", 30_000);
    expect(photo).toMatchObject({ method: "sendPhoto", chatId: "111", name: "chart.png" });
    expect(photo.data.equals(ONE_PIXEL_PNG)).toBe(true);
    expect(photo.caption).toBe("the <b>chart.png</b>");
    const answer = bot.sent.find((sent) => sent.chatId === "111" && /tool said/.test(sent.text));
    expect(answer?.text).toContain("will be sent to the conversation");

    // Read back from the store, as the page does after a reload.
    const stored = await gateway.messages("telegram:111");
    const reply = stored.find((message) => message.kind === "reply") as { files?: unknown };
    expect(reply.files).toEqual([
      {
        path: "chart.png",
        name: "chart.png",
        mediaType: "image/png",
        size: ONE_PIXEL_PNG.length,
        caption: "the **chart.png**",
        sha256: createHash("sha256").update(ONE_PIXEL_PNG).digest("hex"),
        // The copy kept in the data folder's outbox until it is sent: its own, named by the hash.
        copy: expect.stringMatching(
          new RegExp(
            `^${createHash("sha256").update(ONE_PIXEL_PNG).digest("hex")}\\.[0-9a-f-]{36}$`,
          ),
        ),
      },
    ]);
  });

  it("serves the workspace's files to the page: images inline, others to download, nothing outside", async () => {
    const get = (path: string, token = gateway.token) =>
      fetch(`${gateway.url}/api/channels/telegram:111/files/${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
    const image = await get("chart.png");
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("content-disposition")).toMatch(/^inline; filename="chart.png"/);
    expect(Buffer.from(await image.arrayBuffer()).equals(ONE_PIXEL_PNG)).toBe(true);
    const page = await get("notes.html");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-disposition")).toMatch(/^attachment; filename="notes.html"/);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("content-security-policy")).toContain("sandbox");
    expect((await get("..%2Fsecret.txt")).status).toBe(400);
    const link = await get("link.txt");
    expect(link.status).toBe(404);
    expect(await link.text()).not.toContain("outside\n");
    expect((await get("chart.png", "wrong")).status).toBe(401);
  });
});
