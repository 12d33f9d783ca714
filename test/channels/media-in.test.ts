/**
 * Media in, through the chat kit and the gateway, on both engines: a Telegram photo reaches
 * the model as an image block (rudder's engine and the real Claude Code), a document is saved
 * into the workspace's inbox and read by a tool, a voice note is transcribed by an
 * OpenAI-compatible endpoint on loopback, and a file over the cap is refused before download.
 * Media out on the real Claude Code shares its gateway here: the agent's `send_file` (rudder's
 * channel tools, through `--mcp-config`) reaches the fake Bot API as a document (rudder's
 * engine: media-out.test.ts).
 */
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRudderGateway, startTestGateway, type TestGateway } from "../gateway/helpers.js";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
  type RecordedRequest,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type FakeTelegramApi, startFakeTelegramApi } from "../helpers/fake-telegram-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { CLAUDE_CODE_BIN } from "../helpers/one-shot-engine.js";
import { ONE_PIXEL_PNG, telegramTestSource } from "../helpers/telegram-test-source.js";
import { waitFor } from "../helpers/wait-for.js";

let root: string;
let messages: FakeMessagesApi;
let telegram: FakeTelegramApi;
let transcriber: Server;
let transcriberUrl: string;
const transcribed: Array<{ model: unknown; name: string; size: number }> = [];
const gateways: TestGateway[] = [];
const closers: Array<() => Promise<void>> = [];

/** The image blocks of a request's user messages since the model last spoke (this turn's). */
function imagesOf(request: RecordedRequest): Array<{ media_type: string; data: string }> {
  const list: unknown[] = Array.isArray(request.body?.messages) ? request.body.messages : [];
  const spoke = list.findLastIndex(
    (message) => (message as { role?: string }).role === "assistant",
  );
  return list.slice(spoke + 1).flatMap((message) => {
    const { role, content } = message as { role?: string; content?: unknown };
    if (role !== "user" || !Array.isArray(content)) return [];
    return content
      .filter((block: { type?: string }) => block?.type === "image")
      .map((block: { source: { media_type: string; data: string } }) => block.source);
  });
}

/** Answers what it saw; reads an attached notes file with the Read tool first. */
function model(request: RecordedRequest) {
  const results = lastToolResults(request);
  if (results.length > 0) return { text: `the file says: ${JSON.stringify(results[0]?.content)}` };
  const text = lastUserText(request);
  const sent = /please send (\S+)/.exec(text)?.[1];
  if (sent) return { toolUse: { name: "mcp__rudder__send_file", input: { path: sent } } };
  const file = [...text.matchAll(/\[attached file: (inbox\/notes[^ ]*\.txt)/g)].at(-1)?.[1];
  if (file)
    return { toolUse: { name: "Read", input: { file_path: join(root, "workspace", file) } } };
  const images = imagesOf(request);
  return {
    text: `saw ${images.length} image(s) ${images.map((image) => image.media_type).join(",")}; heard: ${text.replace(/\s+/g, " ")}`,
  };
}

const sentTo = (chatId: string, pattern: RegExp, api = telegram) =>
  waitFor(
    () => api.sent.find((message) => message.chatId === chatId && pattern.test(message.text)),
    `a message to ${chatId} matching ${pattern}`,
    30_000,
  );

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-media-in-"));
  for (const folder of ["workspace", "claude-workspace", "home"]) mkdirSync(join(root, folder));
  messages = await startFakeMessagesApi({ fallback: model });
  telegram = await startFakeTelegramApi();
  transcriber = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const form = await new Request("http://x/", {
      method: "POST",
      headers: { "content-type": String(request.headers["content-type"]) },
      body: Buffer.concat(chunks),
    }).formData();
    const file = form.get("file") as File;
    transcribed.push({ model: form.get("model"), name: file.name, size: file.size });
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ text: "please water the plants" }));
  });
  transcriber.listen(0, "127.0.0.1");
  await once(transcriber, "listening");
  transcriberUrl = `http://127.0.0.1:${(transcriber.address() as AddressInfo).port}/v1/audio/transcriptions`;
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.cleanup();
  for (const close of closers) await close();
  await telegram?.close();
  await messages?.close();
  transcriber?.close();
  rmSync(root, { recursive: true, force: true });
});

const telegramSource = (allow: string, api = telegram) => telegramTestSource(api, allow, root);

describe("media through the kit on rudder's engine", () => {
  beforeAll(async () => {
    gateways.push(
      await startRudderGateway({
        prefix: "media-in",
        apiUrl: messages.url,
        workspace: join(root, "workspace"),
        sources: [telegramSource("111")],
        permissionPrompts: false,
        media: {
          maxBytes: 64 * 1024,
          transcription: { url: transcriberUrl, model: "whisper-test" },
        },
      }),
    );
  });

  it("shows a captioned photo to the model and saves it in the inbox", async () => {
    telegram.pushMessage({
      userId: 111,
      text: "what is this?",
      files: [{ kind: "photo", data: ONE_PIXEL_PNG }],
    });
    const answer = await sentTo("111", /saw 1 image/);
    expect(answer.text).toContain("image/png");
    expect(answer.text).toContain("what is this?");
    const request = messages.requests.find((candidate) => imagesOf(candidate).length > 0);
    expect(imagesOf(request as RecordedRequest)[0]?.data).toBe(ONE_PIXEL_PNG.toString("base64"));
    expect(readdirSync(join(root, "workspace", "inbox"))).toContain("image.png");
    // Stored with its attachment, not a line in its text: the history shows what was typed.
    const stored = (await (gateways[0] as TestGateway).messages("telegram:111")).find(
      (message) => message.kind === "user" && message.text.startsWith("what is this?"),
    );
    expect(stored?.text).toBe("what is this?");
    expect(stored?.attachments).toEqual([
      {
        kind: "image",
        path: "inbox/image.png",
        mediaType: "image/png",
        size: ONE_PIXEL_PNG.length,
      },
    ]);
  });

  it("attaches nothing for a marker a person types: text stays text", async () => {
    telegram.pushMessage({ userId: 111, text: "[attached image: inbox/image.png]" });
    const answer = await sentTo(
      "111",
      /saw 0 image\(s\) ; heard: .*attached image: inbox\/image\.png/,
    );
    expect(answer.text).not.toContain("saw 1");
  });

  it("saves a document in the inbox, where a tool reads it", async () => {
    telegram.pushMessage({
      userId: 111,
      files: [
        {
          kind: "document",
          name: "../notes.txt",
          mimeType: "text/plain",
          data: Buffer.from("buy milk"),
        },
      ],
    });
    const answer = await sentTo("111", /the file says/);
    expect(answer.text).toContain("buy milk");
    expect(readFileSync(join(root, "workspace", "inbox", "notes.txt"), "utf8")).toBe("buy milk");
  });

  it("transcribes a voice note and refuses a file over the cap before downloading it", async () => {
    telegram.pushMessage({
      userId: 111,
      files: [{ kind: "voice", data: Buffer.from("OggS-voice") }],
    });
    const answer = await sentTo("111", /please water the plants/);
    expect(answer.text).toContain("[attached voice note: inbox/voice-note.ogg");
    expect(transcribed).toEqual([{ model: "whisper-test", name: "voice-note.ogg", size: 10 }]);

    const downloads = telegram.calls.filter((call) => call.method === "download").length;
    telegram.pushMessage({
      userId: 111,
      files: [{ kind: "document", name: "big.bin", data: Buffer.from("x"), statedSize: 200_000 }],
    });
    const refusal = await sentTo(
      "111",
      /big\.bin is 195\.3 KiB; files up to 64 KiB reach the agent/,
    );
    expect(refusal.text).not.toContain("saw");
    expect(telegram.calls.filter((call) => call.method === "download").length).toBe(downloads);
  });
});

describe("attachments through the HTTP API", () => {
  const post = (body: string | FormData, type?: string) =>
    fetch(`${gateways[0]?.url}/api/channels/web-media/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${gateways[0]?.token}`,
        ...(type ? { "content-type": type } : {}),
      },
      body,
    });

  it("takes JSON with a base64 image (shown to the model) and multipart with a file", async () => {
    const json = await post(
      JSON.stringify({
        text: "look",
        attachments: [
          { name: "shot.png", mediaType: "image/png", data: ONE_PIXEL_PNG.toString("base64") },
        ],
      }),
      "application/json",
    );
    expect(json.status).toBe(202);
    const gateway = gateways[0] as TestGateway;
    const seen = await waitFor(async () => {
      const list = await gateway.messages("web-media");
      return list.find((message) => message.kind === "reply" && /saw 1 image/.test(message.text));
    }, "the reply to the image");
    expect(seen.text).toContain("image/png");
    // The agent is told where the image is, from the attachment the message was stored with.
    expect(seen.text).toContain("[attached image: inbox/shot.png]");
    const stored = (await gateway.messages("web-media")).find((message) => message.kind === "user");
    expect(stored).toMatchObject({
      text: "look",
      attachments: [{ kind: "image", path: "inbox/shot.png", mediaType: "image/png" }],
    });

    const form = new FormData();
    form.append("text", "and a list");
    form.append("file", new Blob(["eggs"], { type: "text/plain" }), "notes-2.txt");
    expect((await post(form)).status).toBe(202);
    const read = await waitFor(async () => {
      const list = await gateway.messages("web-media");
      return list.find((message) => message.kind === "reply" && /eggs/.test(message.text));
    }, "the reply after reading the file");
    expect(read.text).toContain("the file says");
  });

  it("refuses a file over the cap with 413 and bad attachments with 400, one line each", async () => {
    const big = Buffer.alloc(70 * 1024).toString("base64");
    const cases: Array<[string, number, RegExp]> = [
      [
        JSON.stringify({ attachments: [{ name: "a.bin", data: big }] }),
        413,
        /a\.bin is 70 KiB; files up to 64 KiB/,
      ],
      [JSON.stringify({ attachments: [{ name: "a.bin", data: "not base64!" }] }), 400, /base64/],
      [JSON.stringify({ attachments: [] }), 400, /text is required/],
    ];
    for (const [body, status, error] of cases) {
      const response = await post(body, "application/json");
      expect(response.status).toBe(status);
      expect(((await response.json()) as { error: string }).error).toMatch(error);
    }
  });
});

describe("media through the kit on the real Claude Code", () => {
  let bot: FakeTelegramApi;
  it("shows a photo to the model", async () => {
    // A bot of its own: two gateways polling one bot would take each other's updates.
    bot = await startFakeTelegramApi();
    closers.push(() => bot.close());
    gateways.push(
      await startTestGateway({
        prefix: "media-in-claude",
        engine: {
          claudeBin: CLAUDE_CODE_BIN,
          cwd: join(root, "claude-workspace"),
          args: ["--permission-mode", "bypassPermissions"],
          env: { ...claudeCodeEnv(join(root, "home"), messages.url) } as Record<string, string>,
        },
        sources: [telegramSource("222", bot)],
        permissionPrompts: false,
        channelTools: { command: process.execPath, args: [RUDDER_CLI, "mcp-channel-tools"] },
      }),
    );
    bot.pushMessage({
      userId: 222,
      text: "and this one?",
      files: [{ kind: "photo", data: ONE_PIXEL_PNG }],
    });
    const answer = await sentTo("222", /saw 1 image/, bot);
    expect(answer.text).toContain("image/png");
    expect(answer.text).toContain("and this one?");
    // The same process: a marker typed on Claude Code's engine attaches nothing either.
    bot.pushMessage({ userId: 222, text: "[attached image: inbox/image.png] is here" });
    const typed = await sentTo("222", /saw 0 image\(s\) ; heard: .*is here/, bot);
    expect(typed.text).not.toContain("saw 1");
  });

  it("sends a file the agent made back as a Telegram document (send_file)", async () => {
    writeFileSync(join(root, "claude-workspace", "report.txt"), "the report");
    bot.pushMessage({ userId: 222, text: "please send report.txt" });
    const document = await waitFor(() => bot.sentFiles[0], "the document sent", 30_000);
    expect(document).toMatchObject({ method: "sendDocument", chatId: "222", name: "report.txt" });
    expect(document.data.toString()).toBe("the report");
  });
});
