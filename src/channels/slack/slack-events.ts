/**
 * Slack's payloads as the chat kit reads them: a `message` event as an `IncomingChat` (its
 * thread's channel; addressed when it mentions the bot, is in a DM, or replies in a thread the
 * bot is part of; the mention taken out of the text; its files), a `block_actions` press as a
 * `ButtonPress`, a slash command as the same command typed in the thread it acts on.
 */
import type { Attachment, ButtonPress, IncomingChat } from "../kit/chat-platform.js";
import { slackChannelId } from "./slack-address.js";

export interface SlackFile {
  id: string;
  name?: string;
  mimetype?: string;
  size?: number;
  url_private_download?: string;
  url_private?: string;
}

export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  team?: string;
  files?: SlackFile[];
}

export interface SlackBot {
  userId: string;
  teamId: string;
}

/** What decides whether a message is for the bot, and how files and names are fetched. */
export interface SlackReading {
  bot: SlackBot;
  /** Whether the bot is part of this thread's conversation (it answered there, or was asked). */
  inThread(channelId: string): boolean;
  fetchFile(url: string, signal: AbortSignal): Promise<Buffer>;
}

/** Subtypes that are someone writing; the rest (edits, joins, deletions) are not messages. */
const WRITTEN = new Set([undefined, "file_share", "thread_broadcast"]);

/** An `IncomingChat` always with its delivery key (`<channel>:<ts>`: the store's dedupe). */
export type SlackIncoming = IncomingChat & { deliveryKey: string };

export function isDirect(event: SlackMessageEvent): boolean {
  return event.channel_type === "im" || event.channel.startsWith("D");
}

/** The message as the kit takes it; null for the bot's own messages and for non-messages. */
export function incomingOf(
  event: SlackMessageEvent,
  reading: SlackReading,
  userName: string,
): SlackIncoming | null {
  if (event.type !== "message" || !WRITTEN.has(event.subtype)) return null;
  if (event.bot_id !== undefined || event.user === undefined) return null;
  if (event.user === reading.bot.userId) return null;
  const { bot } = reading;
  const team = event.team ?? bot.teamId;
  const channelId = slackChannelId({
    team,
    channel: event.channel,
    threadTs: event.thread_ts ?? event.ts,
  });
  const raw = event.text ?? "";
  const mention = `<@${bot.userId}>`;
  const direct = isDirect(event);
  const addressed =
    direct ||
    raw.includes(mention) ||
    (event.thread_ts !== undefined && reading.inThread(channelId));
  return {
    channelId,
    chatId: event.channel,
    userId: event.user,
    userName,
    text: readable(raw.split(mention).join(" ")),
    messageId: event.ts,
    group: !direct,
    addressed,
    replyTo: undefined,
    attachments: (event.files ?? []).map((file) => attachmentOf(file, reading)),
    deliveryKey: `${event.channel}:${event.ts}`,
    meta: {
      source: "slack",
      chatId: event.channel,
      userId: event.user,
      messageId: event.ts,
      team,
    },
  };
}

/** Slack's escapes undone and spacing tidied, so the agent reads what the person typed. */
function readable(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/[ \t]+/g, " ")
    .trim();
}

function attachmentOf(file: SlackFile, reading: SlackReading): Attachment {
  const mime = file.mimetype ?? "";
  const kind: Attachment["kind"] = mime.startsWith("image/")
    ? "photo"
    : mime.startsWith("audio/")
      ? "audio"
      : mime.startsWith("video/")
        ? "video"
        : "document";
  const url = file.url_private_download ?? file.url_private;
  return {
    kind,
    name: file.name,
    mimeType: file.mimetype,
    size: file.size,
    fetch: (signal) =>
      url === undefined
        ? Promise.reject(new Error(`slack: file ${file.id} has no download address`))
        : reading.fetchFile(url, signal),
  };
}

/** A file's bytes, with the bot token (Slack's private file URLs need it). */
export async function downloadFile(
  url: string,
  token: string,
  signal: AbortSignal,
): Promise<Buffer> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal });
  if (!response.ok) throw new Error(`slack: file download failed (${response.status})`);
  return Buffer.from(await response.arrayBuffer());
}

export interface SlackBlockActions {
  type: string;
  team?: { id: string };
  user: { id: string; name?: string; username?: string };
  channel?: { id: string };
  container?: { message_ts?: string; thread_ts?: string; channel_id?: string };
  message?: { ts: string; thread_ts?: string };
  actions?: Array<{ value?: string }>;
}

/** Where an ephemeral answer to a press goes: `<channel>|<user>|<thread ts>`. */
export function pressOf(payload: SlackBlockActions, bot: SlackBot): ButtonPress | null {
  const channel = payload.channel?.id ?? payload.container?.channel_id;
  const messageTs = payload.container?.message_ts ?? payload.message?.ts;
  const value = payload.actions?.[0]?.value;
  if (payload.type !== "block_actions" || !channel || !messageTs || value === undefined)
    return null;
  const threadTs = payload.container?.thread_ts ?? payload.message?.thread_ts ?? messageTs;
  return {
    channelId: slackChannelId({ team: payload.team?.id ?? bot.teamId, channel, threadTs }),
    chatId: channel,
    userId: payload.user.id,
    userName: payload.user.username ?? payload.user.name ?? payload.user.id,
    data: value,
    pressId: `${channel}|${payload.user.id}|${threadTs}`,
    messageId: messageTs,
  };
}

export interface SlackSlashCommand {
  team_id?: string;
  channel_id: string;
  user_id: string;
  user_name?: string;
  command: string;
  text?: string;
  trigger_id?: string;
}

/**
 * A slash command as the text command the kit parses, for the conversation `channelId` (Slack
 * sends no thread with a slash command: the caller picks one: see slack-slash.ts).
 */
export function commandOf(
  command: SlackSlashCommand,
  channelId: string,
  userName: string,
): SlackIncoming {
  const text = `${command.command} ${command.text ?? ""}`.trim();
  const key = command.trigger_id ?? `${command.channel_id}:${command.command}:${Date.now()}`;
  return {
    channelId,
    chatId: command.channel_id,
    userId: command.user_id,
    userName,
    text,
    messageId: key,
    group: !command.channel_id.startsWith("D"),
    addressed: true,
    replyTo: undefined,
    attachments: [],
    deliveryKey: `slash:${key}`,
    meta: { source: "slack", chatId: command.channel_id, userId: command.user_id },
  };
}
