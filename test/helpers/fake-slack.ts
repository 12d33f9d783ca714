/**
 * A fake Slack on 127.0.0.1 for tests, spoken to by the official clients unchanged
 * (`slackApiUrl` / `RUDDER_SLACK_API_URL` = `url`): the Web API methods rudder calls
 * (`auth.test`, `apps.connections.open`, `chat.postMessage`, `chat.update`, `chat.postEphemeral`,
 * `reactions.add`/`remove`, `conversations.replies`/`history`/`info`, `users.info`, file uploads:
 * fake-slack-methods.ts) and Socket Mode on
 * `ws://127.0.0.1:<port>/socket`: `hello`, then `events_api`, `interactive` and `slash_commands`
 * envelopes, each acknowledged by its `envelope_id` (the acks and their response payloads are
 * kept; an envelope unacknowledged can be sent again as Slack's retry). Calls with the wrong
 * token get `invalid_auth`. A test writes as people with `say` (stored in the conversation, and
 * sent over the socket when one is open and not `offline`), presses buttons with `press`, runs
 * slash commands with `slash`, cues a 429 with Retry-After (`failNext`), and drops the socket
 * (`dropSockets`).
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import {
  findMessage,
  parseBody,
  rawMessage,
  SlackRefusal,
  type SlackUpload,
  webApiMethods,
} from "./fake-slack-methods.js";

export type { SlackUpload };

export interface SlackMessage {
  channel: string;
  ts: string;
  threadTs: string | undefined;
  user: string | undefined;
  /** Set on the bot's own messages. */
  botId: string | undefined;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: Block Kit blocks as the client sent them.
  blocks: any[] | undefined;
  /** Every text it had, the first first (the bot's messages are edited). */
  edits: string[];
  reactions: Set<string>;
  /** The Socket Mode envelope that carried it, when one did. */
  envelopeId?: string;
}

export interface SlackCall {
  method: string;
  // biome-ignore lint/suspicious/noExplicitAny: the arguments are whatever the client sent.
  body: any;
  at: number;
}

export interface SlackAck {
  envelopeId: string;
  // biome-ignore lint/suspicious/noExplicitAny: the ack's response payload, if any.
  payload: any;
  at: number;
}

export interface FakeSlack {
  /** The Web API's base URL, ending in a slash (`slackApiUrl`). */
  url: string;
  appToken: string;
  botToken: string;
  teamId: string;
  botUserId: string;
  calls: SlackCall[];
  messages: SlackMessage[];
  /** Files the bot uploaded (`files.uploadV2`), by file id. */
  uploads: Map<string, SlackUpload>;
  acks: SlackAck[];
  /** Envelopes sent and not acknowledged, by id. */
  unacked(): string[];
  /** Socket Mode connections open now. */
  connections(): number;
  /** Connections greeted with `hello` in all (reconnects count). */
  helloCount(): number;
  /**
   * A person writes in `channel` (a `D...` channel is a DM): stored, then sent as a `message`
   * event unless `offline` or no socket is open. Returns the message (its `ts`).
   */
  say(message: {
    user: string;
    channel: string;
    text: string;
    threadTs?: string;
    offline?: boolean;
    files?: Array<{ id: string; name: string; mimetype: string; content: string }>;
  }): SlackMessage;
  /** Someone presses the button whose value is `value` on the bot's message `ts`. */
  press(press: { user: string; channel: string; ts: string; value: string }): string;
  /** A slash command typed in `channel`; resolves to the ack's payload. */
  slash(command: { user: string; channel: string; command: string; text?: string }): string;
  /** Sends an envelope again (Slack's retry of an unacknowledged event). */
  redeliver(envelopeId: string): void;
  /** The next `count` calls of `method` fail: a 429 with Retry-After, or another status. */
  failNext(method: string, failure: { status: number; retryAfter?: number }, count?: number): void;
  /** From now on, each Web API call fails with this probability: a 429 (Retry-After 1) or a 500. */
  failRate(rate: number): void;
  /** Closes every Socket Mode connection without a goodbye (a dropped network). */
  dropSockets(): void;
  /** The bot's messages in a thread (or a channel's top level with no thread). */
  botMessages(channel: string, threadTs?: string): SlackMessage[];
  close(): Promise<void>;
}

const BOT_ID = "B0RUDDER";

export async function startFakeSlack(
  options: { pingIntervalMs?: number } = {},
): Promise<FakeSlack> {
  const appToken = "xapp-1-fake-app-token";
  const botToken = "xoxb-fake-bot-token";
  const teamId = "T0TEAM";
  const botUserId = "U0RUDDER";
  const calls: SlackCall[] = [];
  const messages: SlackMessage[] = [];
  const acks: SlackAck[] = [];
  const sentEnvelopes = new Map<string, Record<string, unknown>>();
  const failures = new Map<string, Array<{ status: number; retryAfter?: number }>>();
  const files = new Map<string, string>();
  const uploads = new Map<string, SlackUpload>();
  const sockets = new Set<WebSocket>();
  let hellos = 0;
  let clock = Math.floor(Date.now() / 1000);
  let sequence = 0;
  let envelopes = 0;
  let randomFailures = 0;

  const nextTs = () => {
    sequence += 1;
    clock = Math.max(clock, Math.floor(Date.now() / 1000));
    return `${clock}.${String(sequence).padStart(6, "0")}`;
  };

  const socketServer = new WebSocketServer({ noServer: true });
  // Slack sends an envelope to one open connection; with none open, or unacknowledged when a
  // connection says hello, it is sent (again) to the next one.
  const send = (envelope: Record<string, unknown>) => {
    sentEnvelopes.set(String(envelope.envelope_id), envelope);
    const socket = [...sockets].at(-1);
    socket?.send(JSON.stringify(envelope));
  };
  const acked = (id: string) => acks.some((ack) => ack.envelopeId === id);
  const envelope = (type: string, payload: unknown, extra: Record<string, unknown> = {}) => {
    envelopes += 1;
    send({
      envelope_id: `env-${envelopes}`,
      type,
      payload,
      accepts_response_payload: false,
      ...extra,
    });
    return `env-${envelopes}`;
  };

  const eventOf = (message: SlackMessage, raw: Record<string, unknown>) => ({
    token: "verification",
    team_id: teamId,
    api_app_id: "A0RUDDER",
    type: "event_callback",
    event_id: `Ev${message.ts.replace(".", "")}`,
    event_time: Math.floor(Number(message.ts)),
    event: raw,
  });

  const rawOf = (message: SlackMessage, extra: Record<string, unknown> = {}) =>
    rawMessage(message, teamId, extra);

  socketServer.on("connection", (socket: WebSocket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("message", (data) => {
      const parsed = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
      if (parsed.envelope_id === undefined) return;
      acks.push({ envelopeId: parsed.envelope_id, payload: parsed.payload, at: Date.now() });
    });
    const ping = setInterval(() => socket.ping(), options.pingIntervalMs ?? 5000);
    ping.unref();
    socket.on("close", () => clearInterval(ping));
    hellos += 1;
    socket.send(
      JSON.stringify({
        type: "hello",
        num_connections: sockets.size,
        connection_info: { app_id: "A0RUDDER" },
      }),
    );
    for (const [id, envelope] of sentEnvelopes) {
      if (!acked(id)) socket.send(JSON.stringify(envelope));
    }
  });

  const methods = webApiMethods({
    messages,
    teamId,
    botUserId,
    botId: BOT_ID,
    nextTs,
    rawOf,
    uploads,
    uploadUrl: (id) => `${base}/upload/${id}`,
  });

  const answer = (response: ServerResponse, status: number, body: unknown, headers = {}) => {
    if (response.destroyed) return;
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };

  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (url.pathname.startsWith("/upload/")) {
      const upload = uploads.get(url.pathname.slice("/upload/".length));
      if (upload === undefined) {
        response.writeHead(404).end();
        return;
      }
      upload.body = Buffer.concat(chunks);
      response.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${upload.body.length}`);
      return;
    }
    const raw = Buffer.concat(chunks).toString("utf8");
    const token = (request.headers.authorization ?? "").replace(/^Bearer /, "");
    if (url.pathname.startsWith("/files/")) {
      const content = files.get(url.pathname.slice("/files/".length));
      if (token !== botToken || content === undefined) {
        response.writeHead(token !== botToken ? 403 : 404).end();
        return;
      }
      response.writeHead(200, { "content-type": "application/octet-stream" }).end(content);
      return;
    }
    const method = url.pathname.replace(/^\/api\//, "");
    const body = parseBody(raw, request.headers["content-type"] ?? "");
    calls.push({ method, body, at: Date.now() });
    const random =
      Math.random() < randomFailures
        ? Math.random() < 0.5
          ? { status: 429, retryAfter: 1 }
          : { status: 500 }
        : undefined;
    const cued = failures.get(method)?.shift() ?? random;
    if (cued !== undefined) {
      const headers =
        cued.retryAfter === undefined ? {} : { "retry-after": String(cued.retryAfter) };
      answer(response, cued.status, { ok: false, error: "ratelimited" }, headers);
      return;
    }
    const expected = method === "apps.connections.open" ? appToken : botToken;
    if (token !== expected) {
      answer(response, 200, { ok: false, error: "invalid_auth" });
      return;
    }
    if (method === "apps.connections.open") {
      const port = (server.address() as AddressInfo).port;
      answer(response, 200, { ok: true, url: `ws://127.0.0.1:${port}/socket` });
      return;
    }
    const handler = methods[method];
    if (handler === undefined) {
      answer(response, 200, { ok: false, error: "unknown_method" });
      return;
    }
    try {
      answer(response, 200, { ok: true, ...(handler(body, token) as object) });
    } catch (error) {
      if (!(error instanceof SlackRefusal)) throw error;
      answer(response, 200, { ok: false, error: error.message });
    }
  });
  server.on("upgrade", (request, socket, head) => {
    if (!request.url?.startsWith("/socket")) {
      socket.destroy();
      return;
    }
    socketServer.handleUpgrade(request, socket, head, (ws) =>
      socketServer.emit("connection", ws, request),
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;

  return {
    url: `${base}/api/`,
    appToken,
    botToken,
    teamId,
    botUserId,
    calls,
    messages,
    uploads,
    acks,
    unacked: () => [...sentEnvelopes.keys()].filter((id) => !acked(id)),
    connections: () => sockets.size,
    helloCount: () => hellos,
    say(said) {
      const message: SlackMessage = {
        channel: said.channel,
        ts: nextTs(),
        threadTs: said.threadTs,
        user: said.user,
        botId: undefined,
        text: said.text,
        blocks: undefined,
        edits: [said.text],
        reactions: new Set(),
      };
      messages.push(message);
      const extra: Record<string, unknown> = {};
      if (said.files) {
        for (const file of said.files) files.set(file.id, file.content);
        extra.files = said.files.map((file) => ({
          id: file.id,
          name: file.name,
          mimetype: file.mimetype,
          size: Buffer.byteLength(file.content),
          url_private_download: `${base}/files/${file.id}`,
        }));
        extra.subtype = "file_share";
      }
      if (!said.offline) {
        message.envelopeId = envelope("events_api", eventOf(message, rawOf(message, extra)));
      }
      return message;
    },
    press(press) {
      const message = findMessage(messages, press.channel, press.ts);
      return envelope("interactive", {
        type: "block_actions",
        team: { id: teamId },
        user: { id: press.user, username: `name-${press.user}`, name: `name-${press.user}` },
        channel: { id: press.channel },
        container: {
          type: "message",
          message_ts: message.ts,
          channel_id: press.channel,
          ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
        },
        message: { ts: message.ts, ...(message.threadTs ? { thread_ts: message.threadTs } : {}) },
        trigger_id: `trigger-${envelopes}`,
        response_url: `${base}/respond`,
        actions: [{ type: "button", action_id: "rudder", value: press.value }],
      });
    },
    slash(command) {
      return envelope(
        "slash_commands",
        {
          token: "verification",
          team_id: teamId,
          channel_id: command.channel,
          user_id: command.user,
          user_name: `name-${command.user}`,
          command: command.command,
          text: command.text ?? "",
          response_url: `${base}/respond`,
          trigger_id: `trigger-${envelopes}`,
        },
        { accepts_response_payload: true },
      );
    },
    redeliver(envelopeId) {
      const sent = sentEnvelopes.get(envelopeId);
      if (sent === undefined) throw new Error(`no envelope ${envelopeId}`);
      envelopes += 1;
      send({ ...sent, envelope_id: `env-${envelopes}`, retry_attempt: 1, retry_reason: "timeout" });
    },
    failNext(method, failure, count = 1) {
      const queue = failures.get(method) ?? [];
      for (let index = 0; index < count; index += 1) queue.push(failure);
      failures.set(method, queue);
    },
    failRate(rate) {
      randomFailures = rate;
    },
    dropSockets() {
      for (const socket of sockets) socket.terminate();
    },
    botMessages(channel, threadTs) {
      return messages.filter(
        (message) =>
          message.botId !== undefined &&
          message.channel === channel &&
          message.threadTs === threadTs,
      );
    },
    async close() {
      for (const socket of sockets) socket.terminate();
      socketServer.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
