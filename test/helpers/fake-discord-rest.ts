/**
 * The REST half of the fake Discord (test/helpers/fake-discord.ts): the routes under
 * `/api/v10` as Discord answers them, with rate-limit headers, 401 for another token, and the
 * failures a test cued (a 429 with `retry_after`, a 5xx); attachments' URLs outside the API.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DiscordFailure, FakeDiscord } from "./fake-discord.js";
import {
  type FakeAttachment,
  type FakeChannel,
  type FakeMessage,
  type FakeUser,
  message,
  snowflake,
  threadChannel,
} from "./fake-discord-objects.js";

/** What the routes read and change, kept by fake-discord.ts. */
export interface FakeDiscordState {
  fake: FakeDiscord;
  bot: FakeUser;
  guildId: string;
  channels: Map<string, FakeChannel>;
  history: Map<string, FakeMessage[]>;
  files: Map<string, { body: Buffer; contentType: string }>;
  failures: Array<{ route: RegExp; failure: DiscordFailure }>;
  /** The share of calls that fail at random (`failRate`). */
  randomFailures: number;
  url: () => string;
  store: (item: FakeMessage) => void;
  /** Keeps a file under an attachment URL this server answers; resolves to the attachment. */
  keepFile: (channelId: string, file: SentDiscordFile) => FakeAttachment;
  findMessage: (id: string) => FakeMessage | undefined;
}

/** An answer; one without a body (a 204) has no content type, as Discord's (discord.js would parse it). */
export const json = (response: ServerResponse, status: number, body: unknown, headers = {}) => {
  if (body === undefined) {
    response.writeHead(status, headers);
    return void response.end();
  }
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
};

/** A file the bot attached to a message (multipart `files[n]`). */
export interface SentDiscordFile {
  name: string;
  contentType: string;
  data: Buffer;
}

/** A call's JSON body, or a multipart one's `payload_json` and its files. */
async function readBody(
  request: IncomingMessage,
): Promise<{ body: Record<string, unknown>; files: SentDiscordFile[] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const type = request.headers["content-type"] ?? "";
  if (!type.startsWith("multipart/form-data")) {
    const text = raw.toString("utf8");
    return { body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>), files: [] };
  }
  const form = await new Response(raw, { headers: { "content-type": type } }).formData();
  const files: SentDiscordFile[] = [];
  for (const [key, value] of form.entries()) {
    if (!/^files\[\d+\]$/.test(key) || typeof value === "string") continue;
    files.push({
      name: value.name,
      contentType: value.type,
      data: Buffer.from(await value.arrayBuffer()),
    });
  }
  const payload = form.get("payload_json");
  const body = typeof payload === "string" ? (JSON.parse(payload) as Record<string, unknown>) : {};
  return { body, files };
}

function buttonsOf(components: unknown): string[][] {
  if (!Array.isArray(components)) return [];
  return components.map((row: { components?: Array<{ custom_id?: string }> }) =>
    (row.components ?? []).map((button) => button.custom_id ?? ""),
  );
}

const rateHeaders = () => ({
  "x-ratelimit-limit": "50",
  "x-ratelimit-remaining": "49",
  "x-ratelimit-reset-after": "1",
  "x-ratelimit-reset": String(Date.now() / 1000 + 1),
  "x-ratelimit-bucket": "fake-bucket",
});

function botSends(
  state: FakeDiscordState,
  channelId: string,
  { body, files }: { body: Record<string, unknown>; files: SentDiscordFile[] },
  response: ServerResponse,
): unknown {
  const content = String(body.content ?? "");
  if ((content.trim() === "" && files.length === 0) || content.length > 2000) {
    const reason =
      content.length > 2000 ? "Must be 2000 or fewer in length." : "Cannot send an empty message";
    return json(response, 400, {
      message: "Invalid Form Body",
      code: 50035,
      errors: { content: reason },
    });
  }
  const reference = body.message_reference as { message_id?: string } | undefined;
  const item = message({
    channelId,
    guildId: state.channels.get(channelId)?.guild_id,
    author: state.bot,
    content,
    components: (body.components as unknown[]) ?? [],
    attachments: files.map((file) => state.keepFile(channelId, file)),
    replyTo: reference?.message_id ? state.findMessage(reference.message_id) : undefined,
  });
  state.store(item);
  state.fake.sent.push({
    id: item.id,
    channelId,
    text: content,
    buttons: buttonsOf(body.components),
    replyTo: reference?.message_id,
    files,
    edits: [{ text: content, at: Date.now() }],
  });
  state.fake.gateway.dispatch("MESSAGE_CREATE", item);
  json(response, 200, item, rateHeaders());
}

/** The cued failure for this call, if any, answered; true when it was. */
function cuedFailure(
  state: FakeDiscordState,
  call: string,
  content: string,
  response: ServerResponse,
): boolean {
  const cued = state.failures.findIndex(
    ({ route, failure }) => route.test(call) && (!failure.text || failure.text.test(content)),
  );
  const random =
    Math.random() < state.randomFailures
      ? Math.random() < 0.5
        ? { status: 429, retryAfterSeconds: 1 }
        : { status: 500 }
      : undefined;
  if (cued < 0 && random === undefined) return false;
  const failure =
    cued < 0
      ? (random as DiscordFailure)
      : (state.failures.splice(cued, 1)[0] as { failure: DiscordFailure }).failure;
  if (failure.status === 429) {
    const seconds = failure.retryAfterSeconds ?? 1;
    json(
      response,
      429,
      { message: "You are being rate limited.", retry_after: seconds, global: false },
      {
        ...rateHeaders(),
        "retry-after": String(Math.ceil(seconds)),
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset-after": String(seconds),
        "x-ratelimit-scope": "user",
      },
    );
  } else {
    json(response, failure.status, { message: "cued failure", code: failure.code ?? 0 });
  }
  return true;
}

function editMessage(
  state: FakeDiscordState,
  messageId: string,
  body: Record<string, unknown>,
  response: ServerResponse,
): unknown {
  const target = state.findMessage(messageId);
  const sent = state.fake.sent.find((item) => item.id === messageId);
  if (!target || !sent) return json(response, 404, { message: "Unknown Message", code: 10008 });
  if (typeof body.content === "string") {
    if (body.content.length > 2000) {
      return json(response, 400, { message: "Invalid Form Body", code: 50035 });
    }
    target.content = body.content;
    sent.text = body.content;
    sent.edits.push({ text: body.content, at: Date.now() });
  }
  if (body.components !== undefined) {
    target.components = body.components as unknown[];
    sent.buttons = buttonsOf(body.components);
  }
  json(response, 200, target, rateHeaders());
}

function startThread(
  state: FakeDiscordState,
  parentId: string,
  messageId: string,
  body: Record<string, unknown>,
  response: ServerResponse,
): unknown {
  const { channels, fake } = state;
  if (channels.has(messageId)) {
    return json(response, 400, {
      message: "A thread has already been created for this message",
      code: 160004,
    });
  }
  if (!state.findMessage(messageId)) {
    return json(response, 404, { message: "Unknown Message", code: 10008 });
  }
  const name = String(body.name ?? "thread");
  const thread = threadChannel(messageId, state.guildId, parentId, name, state.bot.id);
  channels.set(messageId, thread);
  fake.threadsStarted.push(messageId);
  fake.gateway.dispatch("THREAD_CREATE", { ...thread, newly_created: true });
  json(response, 201, thread, rateHeaders());
}

function readMessages(
  state: FakeDiscordState,
  channelId: string,
  query: URLSearchParams,
  response: ServerResponse,
): void {
  const after = BigInt(query.get("after") ?? "0");
  const limit = Number(query.get("limit") ?? "50");
  const list = (state.history.get(channelId) ?? []).filter((item) => BigInt(item.id) > after);
  // Discord answers newest first: the `limit` oldest after `after`.
  json(response, 200, list.slice(0, limit).reverse(), rateHeaders());
}

/** One REST call (or an attachment's download). */
export async function handleRest(
  state: FakeDiscordState,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<unknown> {
  const { fake, channels } = state;
  const address = new URL(request.url ?? "/", "http://127.0.0.1");
  const method = request.method ?? "GET";
  if (address.pathname.startsWith("/attachments/")) {
    const file = state.files.get(`${state.url()}${address.pathname}`);
    if (!file) return json(response, 404, { message: "404: Not Found" });
    response.writeHead(200, { "content-type": file.contentType });
    return void response.end(file.body);
  }
  const path = address.pathname.replace(/^\/api\/v10/, "");
  fake.calls.push({ method, path, at: Date.now() });
  const read = method === "GET" ? { body: {}, files: [] } : await readBody(request);
  const body: Record<string, unknown> = read.body;
  const isCallback = path.startsWith("/interactions/");
  if (!isCallback && request.headers.authorization !== `Bot ${fake.token}`) {
    return json(response, 401, { message: "401: Unauthorized", code: 0 });
  }
  const content = typeof body.content === "string" ? body.content : "";
  if (cuedFailure(state, `${method} ${path}`, content, response)) return;
  const on = (verb: string, pattern: RegExp): string[] | null =>
    verb === method ? (pattern.exec(path)?.slice(1) ?? null) : null;
  if (on("GET", /^\/gateway\/bot$/)) {
    return json(response, 200, {
      url: `${state.url().replace(/^http/, "ws")}/gateway`,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
    });
  }
  if (on("GET", /^\/users\/@me$/)) return json(response, 200, state.bot, rateHeaders());
  const channel = on("GET", /^\/channels\/(\d+)$/) ?? on("POST", /^\/channels\/(\d+)\/typing$/);
  if (channel) {
    const found = channels.get(channel[0] as string);
    if (!found) return json(response, 404, { message: "Unknown Channel", code: 10003 });
    return method === "GET"
      ? json(response, 200, found, rateHeaders())
      : json(response, 204, undefined, rateHeaders());
  }
  const messages =
    on("GET", /^\/channels\/(\d+)\/messages$/) ?? on("POST", /^\/channels\/(\d+)\/messages$/);
  if (messages) {
    const channelId = messages[0] as string;
    if (!channels.has(channelId)) {
      return json(response, 404, { message: "Unknown Channel", code: 10003 });
    }
    return method === "POST"
      ? botSends(state, channelId, read, response)
      : readMessages(state, channelId, address.searchParams, response);
  }
  const edit = on("PATCH", /^\/channels\/\d+\/messages\/(\d+)$/);
  if (edit) return editMessage(state, edit[0] as string, body, response);
  const thread = on("POST", /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/);
  if (thread) return startThread(state, thread[0] as string, thread[1] as string, body, response);
  const reaction = on("PUT", /^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/);
  if (reaction) {
    const [channelId = "", messageId = "", emoji = ""] = reaction;
    fake.reactions.push({ channelId, messageId, emoji: decodeURIComponent(emoji) });
    return json(response, 204, undefined, rateHeaders());
  }
  const callback = on("POST", /^\/interactions\/(\d+)\/[^/]+\/callback$/);
  if (callback) {
    fake.callbacks.set(callback[0] as string, body as { type: number });
    return json(response, 204, undefined);
  }
  const commands = on("PUT", /^\/applications\/\d+\/guilds\/(\d+)\/commands$/);
  if (commands) {
    const list = (Array.isArray(body) ? body : []) as Array<{ name: string; description: string }>;
    fake.commands.set(commands[0] as string, list);
    return json(
      response,
      200,
      list.map((command) => ({ ...command, id: snowflake() })),
    );
  }
  json(response, 404, { message: "404: Not Found", code: 0 });
}
