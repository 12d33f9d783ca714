/**
 * The fake Slack's Web API methods (see fake-slack.ts), over the conversation it keeps: what
 * rudder calls, each answering as Slack does (`{ ok: true, ... }`, or a `SlackRefusal` for
 * `{ ok: false, error }`). Files the bot uploads (`files.getUploadURLExternal`, the upload to
 * the loopback URL it returns, `files.completeUploadExternal`) are kept in `uploads`.
 */
import type { SlackMessage } from "./fake-slack.js";

/** A file the bot uploaded, as Slack holds it. */
export interface SlackUpload {
  id: string;
  filename: string;
  /** The upload POST's raw body (a multipart form holding the file's bytes), once posted. */
  body: Buffer | undefined;
  /** Set once completed: where it was shared, with what comment. */
  channel: string | undefined;
  threadTs: string | undefined;
  initialComment: string | undefined;
  title: string | undefined;
}

/** What the methods read and change. */
export interface SlackWorld {
  messages: SlackMessage[];
  teamId: string;
  botUserId: string;
  botId: string;
  nextTs(): string;
  rawOf(message: SlackMessage): Record<string, unknown>;
  uploads: Map<string, SlackUpload>;
  /** Where a file's bytes are posted (the fake's own loopback address). */
  uploadUrl(fileId: string): string;
}

export class SlackRefusal extends Error {}

export function findMessage(messages: SlackMessage[], channel: string, ts: string): SlackMessage {
  const message = messages.find((each) => each.channel === channel && each.ts === ts);
  if (message === undefined) throw new SlackRefusal("message_not_found");
  return message;
}

// biome-ignore lint/suspicious/noExplicitAny: Web API arguments are free-form.
type Method = (body: any, token: string) => unknown;

export function webApiMethods(world: SlackWorld): Record<string, Method> {
  const { messages, botUserId, nextTs, rawOf, teamId } = world;
  const BOT_ID = world.botId;
  const methods: Record<string, Method> = {
    "auth.test": () => ({
      url: "https://fake.slack.com/",
      team: "Fake team",
      user: "rudder",
      team_id: teamId,
      user_id: botUserId,
      bot_id: BOT_ID,
    }),
    "chat.postMessage": (body) => {
      const message: SlackMessage = {
        channel: String(body.channel),
        ts: nextTs(),
        threadTs: body.thread_ts ? String(body.thread_ts) : undefined,
        user: botUserId,
        botId: BOT_ID,
        text: String(body.text ?? ""),
        blocks: parseJson(body.blocks),
        edits: [String(body.text ?? "")],
        reactions: new Set(),
      };
      if (message.text.trim() === "" && message.blocks === undefined)
        throw new SlackRefusal("no_text");
      messages.push(message);
      return { channel: message.channel, ts: message.ts, message: { text: message.text } };
    },
    "chat.update": (body) => {
      const message = find(String(body.channel), String(body.ts));
      message.text = String(body.text ?? "");
      message.blocks = parseJson(body.blocks);
      message.edits.push(message.text);
      return { channel: message.channel, ts: message.ts, text: message.text };
    },
    "chat.postEphemeral": () => ({ message_ts: nextTs() }),
    "reactions.add": (body) => {
      const message = find(String(body.channel), String(body.timestamp));
      if (message.reactions.has(String(body.name))) throw new SlackRefusal("already_reacted");
      message.reactions.add(String(body.name));
      return {};
    },
    "reactions.remove": (body) => {
      const message = find(String(body.channel), String(body.timestamp));
      if (!message.reactions.delete(String(body.name))) throw new SlackRefusal("no_reaction");
      return {};
    },
    "conversations.replies": (body) => {
      const channel = String(body.channel);
      const root = String(body.ts);
      const oldest = Number(body.oldest ?? 0);
      const thread = messages.filter(
        (message) =>
          message.channel === channel && (message.ts === root || message.threadTs === root),
      );
      const since = thread.filter(
        (message) =>
          Number(message.ts) > oldest || (body.inclusive && Number(message.ts) === oldest),
      );
      return {
        messages: since.map((message) => rawOf(message)),
        has_more: false,
      };
    },
    "conversations.history": (body) => {
      const channel = String(body.channel);
      const oldest = Number(body.oldest ?? 0);
      const top = messages.filter(
        (message) =>
          message.channel === channel &&
          (message.threadTs === undefined || message.threadTs === message.ts) &&
          Number(message.ts) > oldest,
      );
      return { messages: top.reverse().map((message) => rawOf(message)), has_more: false };
    },
    "users.info": (body) => ({
      user: { id: String(body.user), name: `name-${body.user}`, real_name: `Person ${body.user}` },
    }),
  };

  const find = (channel: string, ts: string): SlackMessage => {
    const message = messages.find((each) => each.channel === channel && each.ts === ts);
    if (message === undefined) throw new SlackRefusal("message_not_found");
    return message;
  };

  let uploads = 0;
  methods["conversations.list"] = (body) => {
    if (body.types !== "im") throw new SlackRefusal("invalid_types");
    const ids = new Set(
      messages.filter((message) => message.channel.startsWith("D")).map((m) => m.channel),
    );
    return { channels: [...ids].map((id) => ({ id, is_im: true })) };
  };
  methods["conversations.info"] = (body) => {
    const id = String(body.channel);
    return {
      channel: id.startsWith("D")
        ? { id, is_im: true }
        : { id, name: id.toLowerCase(), is_channel: true },
    };
  };
  methods["files.getUploadURLExternal"] = (body) => {
    uploads += 1;
    const id = `F0UPLOAD${uploads}`;
    world.uploads.set(id, {
      id,
      filename: String(body.filename),
      body: undefined,
      channel: undefined,
      threadTs: undefined,
      initialComment: undefined,
      title: undefined,
    });
    return { upload_url: world.uploadUrl(id), file_id: id };
  };
  methods["files.completeUploadExternal"] = (body) => {
    const files = parseJson(body.files) ?? [];
    const completed = files.map((file: { id: string; title?: string }) => {
      const upload = world.uploads.get(file.id);
      if (upload?.body === undefined) throw new SlackRefusal("file_not_found");
      upload.channel = body.channel_id === undefined ? undefined : String(body.channel_id);
      upload.threadTs = body.thread_ts === undefined ? undefined : String(body.thread_ts);
      upload.initialComment =
        body.initial_comment === undefined ? undefined : String(body.initial_comment);
      upload.title = file.title;
      return { id: upload.id, name: upload.filename, title: file.title ?? upload.filename };
    });
    return { files: completed };
  };
  return methods;
}

// biome-ignore lint/suspicious/noExplicitAny: blocks are free-form JSON.
export function parseJson(value: unknown): any[] | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (Array.isArray(value)) return value;
  return JSON.parse(String(value)) as unknown[];
}

/** A message as Slack's events and reads carry it. */
export function rawMessage(
  message: SlackMessage,
  teamId: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: "message",
    channel: message.channel,
    channel_type: message.channel.startsWith("D") ? "im" : "channel",
    user: message.user,
    ...(message.botId ? { bot_id: message.botId } : {}),
    text: message.text,
    ts: message.ts,
    ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
    team: teamId,
    ...extra,
  };
}

export function parseBody(raw: string, contentType: string): Record<string, unknown> {
  if (raw === "") return {};
  if (contentType.includes("application/json")) return JSON.parse(raw) as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(raw));
}
