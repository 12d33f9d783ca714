/**
 * Discord's gateway payloads as the chat kit reads them: a message (`MESSAGE_CREATE`, or one
 * read back in a catch-up) as an `IncomingChat` in its conversation's channel, a button press
 * (`INTERACTION_CREATE` of a component) as a `ButtonPress`, a slash command as the same text
 * typed (`/model opus`). Who sent it is named `Ada (@ada)`; the bot's mention is taken out of
 * the text.
 */
import type { Attachment, ButtonPress, IncomingChat } from "../kit/chat-platform.js";
import { channelIdOf, type DiscordAddress } from "./discord-address.js";

/** The parts of Discord's objects the source reads (the API's own field names). */
export interface DiscordUser {
  id: string;
  username: string;
  global_name?: string | null;
  bot?: boolean;
}

export interface DiscordAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  content_type?: string;
}

export interface DiscordMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: DiscordUser;
  member?: { roles?: string[] };
  content: string;
  /** 0 a message, 19 a reply; others are Discord's own notices. */
  type?: number;
  mentions?: DiscordUser[];
  attachments?: DiscordAttachment[];
  flags?: number;
  message_reference?: { message_id?: string };
  referenced_message?: { author?: DiscordUser } | null;
}

export interface DiscordInteraction {
  id: string;
  token: string;
  type: number;
  channel_id?: string;
  guild_id?: string;
  user?: DiscordUser;
  member?: { user: DiscordUser; roles?: string[] };
  data?: {
    name?: string;
    custom_id?: string;
    options?: Array<{ name: string; value?: unknown }>;
  };
  message?: { id: string };
}

/** Where a message was written, as the platform resolved its channel. */
export interface Place {
  address: DiscordAddress;
  /** A guild channel or thread (the bot answers only when addressed), not a DM. */
  group: boolean;
  /** A thread that is a conversation with the bot: its messages need no mention. */
  conversation: boolean;
  /** The thread's name, for the page (a DM is named after the person). */
  title?: string | undefined;
}

/** Downloads an attachment's URL. */
export type FetchUrl = (url: string, signal: AbortSignal) => Promise<Buffer>;

/** Discord's flag on a voice message. */
const VOICE_MESSAGE_FLAG = 1 << 13;

export function nameOf(user: DiscordUser | undefined): string {
  if (user === undefined) return "someone";
  const shown = user.global_name?.trim();
  return shown ? `${shown} (@${user.username})` : `@${user.username}`;
}

export function mentions(message: DiscordMessage, botId: string): boolean {
  return (
    (message.mentions ?? []).some((user) => user.id === botId) ||
    message.content.includes(`<@${botId}>`) ||
    message.content.includes(`<@!${botId}>`)
  );
}

/** The text without the bot's mention (`<@id>` or `<@!id>`), trimmed. */
export function withoutMention(text: string, botId: string): string {
  return text.replaceAll(`<@${botId}>`, "").replaceAll(`<@!${botId}>`, "").trim();
}

function attachmentsOf(message: DiscordMessage, fetch: FetchUrl): Attachment[] {
  return (message.attachments ?? []).map((file) => {
    const type = file.content_type ?? "";
    const kind: Attachment["kind"] = type.startsWith("image/")
      ? "photo"
      : type.startsWith("audio/")
        ? (message.flags ?? 0) & VOICE_MESSAGE_FLAG
          ? "voice"
          : "audio"
        : type.startsWith("video/")
          ? "video"
          : "document";
    return {
      kind,
      name: file.filename,
      mimeType: file.content_type,
      size: file.size,
      fetch: (signal: AbortSignal) => fetch(file.url, signal),
    };
  });
}

export function incomingOf(
  message: DiscordMessage,
  place: Place,
  botId: string,
  fetch: FetchUrl,
): IncomingChat {
  const userId = message.author.id;
  const addressed =
    !place.group ||
    place.conversation ||
    mentions(message, botId) ||
    message.referenced_message?.author?.id === botId;
  const chatId = place.address.channel;
  return {
    channelId: channelIdOf(place.address),
    chatId,
    userId,
    userName: nameOf(message.author),
    text: withoutMention(message.content, botId),
    messageId: message.id,
    group: place.group,
    addressed,
    replyTo: message.message_reference?.message_id,
    attachments: attachmentsOf(message, fetch),
    deliveryKey: message.id,
    roles: message.member?.roles ?? [],
    meta: {
      source: "discord",
      chatId,
      userId,
      messageId: message.id,
      chatTitle: place.group ? place.title : nameOf(message.author),
      ...(message.guild_id === undefined ? {} : { guildId: message.guild_id }),
    },
  };
}

function userOf(interaction: DiscordInteraction): DiscordUser | undefined {
  return interaction.member?.user ?? interaction.user;
}

/** A press's id as `answerButton` gets it: the interaction's id and token. */
export function pressIdOf(interaction: DiscordInteraction): string {
  return `${interaction.id}/${interaction.token}`;
}

export function pressOf(interaction: DiscordInteraction, place: Place): ButtonPress | null {
  const user = userOf(interaction);
  const data = interaction.data?.custom_id;
  if (user === undefined || data === undefined || interaction.message === undefined) return null;
  return {
    channelId: channelIdOf(place.address),
    chatId: place.address.channel,
    userId: user.id,
    userName: nameOf(user),
    data,
    pressId: pressIdOf(interaction),
    messageId: interaction.message.id,
    roles: interaction.member?.roles ?? [],
  };
}

/** A slash command as the text a person would type: `/model opus`. */
export function commandText(interaction: DiscordInteraction): string {
  const options = (interaction.data?.options ?? [])
    .map((option) => (option.value === undefined ? "" : String(option.value)))
    .filter((value) => value !== "");
  return [`/${interaction.data?.name ?? ""}`, ...options].join(" ");
}

export function commandOf(interaction: DiscordInteraction, place: Place): IncomingChat | null {
  const user = userOf(interaction);
  if (user === undefined || !interaction.data?.name) return null;
  const chatId = place.address.channel;
  return {
    channelId: channelIdOf(place.address),
    chatId,
    userId: user.id,
    userName: nameOf(user),
    text: commandText(interaction),
    messageId: interaction.id,
    group: place.group,
    addressed: true,
    replyTo: undefined,
    attachments: [],
    deliveryKey: interaction.id,
    roles: interaction.member?.roles ?? [],
    meta: { source: "discord", chatId, userId: user.id, interactionId: interaction.id },
  };
}
