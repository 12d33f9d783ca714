/**
 * A fake Discord on 127.0.0.1 for tests, which `discord.js` talks to unchanged: the REST API
 * under `/api/v10` (`/gateway/bot` answering this server's WebSocket URL, `users/@me`,
 * channels and their messages with `after`, message create (JSON, or multipart with files, kept
 * in `sent`) and edit (2,000 characters at most), threads started on a message (the thread's id
 * is the message's, as Discord does; a second start is refused with code 160004), reactions,
 * typing, interaction callbacks, guild commands bulk overwrite, attachments' URLs) with
 * rate-limit headers, 401 for another token and cued failures (a 429 with `retry_after`, a 5xx)
 * by `failNext` or a share of all calls by `failRate`; and the gateway
 * (test/helpers/fake-discord-gateway.ts). One guild with a text channel and a forum; people
 * speak with `say`, open forum posts with `post`, press buttons with `press` and run slash
 * commands with `slash`; what the bot sends is in `sent`, with every edit.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type FakeGateway, startFakeGateway } from "./fake-discord-gateway.js";
import {
  CHANNEL_TYPE,
  type FakeAttachment,
  type FakeChannel,
  type FakeMessage,
  type FakeUser,
  guildCreate,
  interaction,
  message,
  snowflake,
  textChannel,
  threadChannel,
  user,
} from "./fake-discord-objects.js";
import {
  type FakeDiscordState,
  handleRest,
  json,
  type SentDiscordFile,
} from "./fake-discord-rest.js";

export type { FakeMessage } from "./fake-discord-objects.js";

/** What the bot sent, with its newest text and buttons (custom ids, row by row). */
export interface SentDiscordMessage {
  id: string;
  channelId: string;
  text: string;
  buttons: string[][];
  replyTo: string | undefined;
  /** The files attached to it (multipart `files[n]`). */
  files: SentDiscordFile[];
  edits: Array<{ text: string; at: number }>;
}

export interface DiscordFailure {
  status: number;
  retryAfterSeconds?: number;
  code?: number;
  /** Only for a message create or edit whose content matches. */
  text?: RegExp;
}

export interface FakeDiscord {
  /** The REST base URL (`RUDDER_DISCORD_API_URL`). */
  apiUrl: string;
  token: string;
  botId: string;
  guildId: string;
  /** The guild's text channel and forum. */
  channelId: string;
  forumId: string;
  gateway: FakeGateway;
  sent: SentDiscordMessage[];
  reactions: Array<{ channelId: string; messageId: string; emoji: string }>;
  /** Interaction callbacks by interaction id. */
  callbacks: Map<string, { type: number; data?: { content?: string; flags?: number } }>;
  /** Guild commands last registered, by guild id. */
  commands: Map<string, Array<{ name: string; description: string }>>;
  threadsStarted: string[];
  /** Every REST call: method and path (after `/api/v10`). */
  calls: Array<{ method: string; path: string; at: number }>;
  /** Whether the Message Content intent is enabled for the application (default true). */
  messageContent: boolean;
  /** A person (made on first use). */
  person(id: string, name?: string): FakeUser;
  /** The DM channel between the bot and a person. */
  dm(userId: string): string;
  /**
   * A person writes in a channel (a thread, a DM); `mention` puts `<@bot>` first. Dispatched
   * unless `quiet` (said while the bot was not connected: found only in the history).
   */
  say(fields: {
    userId: string;
    channelId: string;
    text: string;
    mention?: boolean;
    roles?: string[];
    attachments?: Array<{ name: string; body: Buffer; contentType?: string }>;
    replyTo?: string;
    quiet?: boolean;
  }): FakeMessage;
  /** A person opens a forum post (a thread whose first message has the post's id). */
  post(fields: { userId: string; title: string; text: string; mention?: boolean }): FakeMessage;
  press(fields: { userId: string; messageId: string; customId: string; roles?: string[] }): string;
  slash(fields: { userId: string; channelId: string; name: string; options?: unknown[] }): string;
  failNext(route: RegExp, failure: DiscordFailure, count?: number): void;
  /** From now on this share of REST calls fails: half 429s (`retry_after` 1 s), half 500s. */
  failRate(rate: number): void;
  close(): Promise<void>;
}

export async function startFakeDiscord(options: { port?: number } = {}): Promise<FakeDiscord> {
  const token = `fake-discord-token.${snowflake()}`;
  const bot = user(snowflake(), "rudder", true);
  const applicationId = bot.id;
  const guildId = snowflake();
  const owner = user(snowflake(), "owner");
  const people = new Map<string, FakeUser>();
  const channels = new Map<string, FakeChannel>();
  const history = new Map<string, FakeMessage[]>();
  const files = new Map<string, { body: Buffer; contentType: string }>();
  const failures: Array<{ route: RegExp; failure: DiscordFailure }> = [];
  const text = textChannel(snowflake(), guildId, "general");
  const forum = textChannel(snowflake(), guildId, "questions", CHANNEL_TYPE.forum);
  channels.set(text.id, text);
  channels.set(forum.id, forum);
  let url = "";

  const person = (id: string, name = `user${id.slice(-4)}`) => {
    let known = people.get(id);
    if (!known) {
      known = user(id, name);
      people.set(id, known);
    }
    return known;
  };
  const store = (item: FakeMessage) => {
    const list = history.get(item.channel_id) ?? [];
    list.push(item);
    history.set(item.channel_id, list);
    const channel = channels.get(item.channel_id);
    if (channel) channel.last_message_id = item.id;
  };
  const keepFile = (channelId: string, file: SentDiscordFile): FakeAttachment => {
    const id = snowflake();
    const location = `${url}/attachments/${channelId}/${id}/${file.name}`;
    files.set(location, {
      body: file.data,
      contentType: file.contentType || "application/octet-stream",
    });
    return {
      id,
      filename: file.name,
      size: file.data.length,
      url: location,
      proxy_url: location,
      ...(file.contentType ? { content_type: file.contentType } : {}),
    };
  };
  const findMessage = (id: string) => {
    for (const list of history.values()) {
      const found = list.find((item) => item.id === id);
      if (found) return found;
    }
    return undefined;
  };

  const fake: FakeDiscord = {
    apiUrl: "",
    token,
    botId: bot.id,
    guildId,
    channelId: text.id,
    forumId: forum.id,
    gateway: undefined as unknown as FakeGateway,
    sent: [],
    reactions: [],
    callbacks: new Map(),
    commands: new Map(),
    threadsStarted: [],
    calls: [],
    messageContent: true,
    person,
    dm(userId) {
      const existing = [...channels.values()].find(
        (channel) => channel.type === CHANNEL_TYPE.dm && channel.recipients?.[0]?.id === userId,
      );
      if (existing) return existing.id;
      const channel: FakeChannel = {
        id: snowflake(),
        type: CHANNEL_TYPE.dm,
        recipients: [person(userId)],
        last_message_id: null,
      };
      channels.set(channel.id, channel);
      return channel.id;
    },
    say(fields) {
      const channel = channels.get(fields.channelId);
      if (!channel) throw new Error(`no channel ${fields.channelId}`);
      const attachments: FakeAttachment[] = (fields.attachments ?? []).map((file) =>
        keepFile(channel.id, {
          name: file.name,
          data: file.body,
          contentType: file.contentType ?? "",
        }),
      );
      const item = message({
        channelId: channel.id,
        guildId: channel.guild_id,
        author: person(fields.userId),
        content: fields.mention ? `<@${bot.id}> ${fields.text}` : fields.text,
        mentions: fields.mention ? [bot] : [],
        roles: fields.roles ?? [],
        attachments,
        replyTo: fields.replyTo === undefined ? undefined : findMessage(fields.replyTo),
      });
      store(item);
      if (!fields.quiet) fake.gateway.dispatch("MESSAGE_CREATE", item);
      return item;
    },
    post(fields) {
      const id = snowflake();
      const thread = threadChannel(id, guildId, forum.id, fields.title, fields.userId);
      channels.set(id, thread);
      fake.gateway.dispatch("THREAD_CREATE", { ...thread, newly_created: true });
      return fake.say({
        userId: fields.userId,
        channelId: id,
        text: fields.text,
        mention: fields.mention,
      });
    },
    press(fields) {
      const target = findMessage(fields.messageId);
      if (!target) throw new Error(`no message ${fields.messageId}`);
      const channel = channels.get(target.channel_id) as FakeChannel;
      const payload = interaction({
        applicationId,
        type: 3,
        channel,
        user: person(fields.userId),
        roles: fields.roles ?? [],
        data: { custom_id: fields.customId, component_type: 2 },
        message: target,
      });
      fake.gateway.dispatch("INTERACTION_CREATE", payload);
      return payload.id;
    },
    slash(fields) {
      const channel = channels.get(fields.channelId) as FakeChannel;
      const payload = interaction({
        applicationId,
        type: 2,
        channel,
        user: person(fields.userId),
        roles: [],
        data: { id: snowflake(), name: fields.name, type: 1, options: fields.options ?? [] },
      });
      fake.gateway.dispatch("INTERACTION_CREATE", payload);
      return payload.id;
    },
    failNext(route, failure, count = 1) {
      for (let index = 0; index < count; index += 1) failures.push({ route, failure });
    },
    failRate(rate) {
      state.randomFailures = rate;
    },
    close: async () => undefined,
  };

  const state: FakeDiscordState = {
    fake,
    bot,
    guildId,
    channels,
    history,
    files,
    failures,
    randomFailures: 0,
    url: () => url,
    store,
    keepFile,
    findMessage,
  };

  const server = createServer((request, response) => {
    handleRest(state, request, response).catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { message: String(error), code: 0 });
    });
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  fake.gateway = startFakeGateway(server, {
    token,
    messageContent: () => fake.messageContent,
    url: () => `${url.replace(/^http/, "ws")}/gateway`,
    ready: () => {
      const threads = [...channels.values()].filter(
        (channel) => channel.type === CHANNEL_TYPE.publicThread,
      );
      const guildChannels = [...channels.values()].filter(
        (channel) => channel.guild_id === guildId && channel.type !== CHANNEL_TYPE.publicThread,
      );
      return {
        user: bot,
        application: { id: applicationId, flags: 0 },
        guilds: [guildCreate(guildId, owner.id, guildChannels, threads)],
      };
    },
  });
  server.listen(options.port ?? 0, "127.0.0.1");
  await once(server, "listening");
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.apiUrl = `${url}/api`;
  fake.close = async () => {
    await fake.gateway.close();
    for (const socket of sockets) socket.destroy();
    server.close();
    await once(server, "close");
  };
  return fake;
}
