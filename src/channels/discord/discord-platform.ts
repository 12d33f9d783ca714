/**
 * Discord as a chat kit platform, on `discord.js` (loaded when the source starts, so `rudder
 * run` does not pay for it). The gateway connection is discord.js's: it resumes a dropped
 * session with the last sequence number, or identifies anew; after each new session the
 * threads and DMs the store knows are read back (`discord-catch-up.ts`) and what was said
 * meanwhile is handled once (the kit drops a message id it has seen). A mention in a guild
 * channel opens a thread on that message, where the conversation lives; a DM is its own
 * conversation. Buttons and slash commands arrive as interactions, answered at once. A file goes
 * as a message with an attachment (multipart), its caption the message's text.
 * Rate limits are the ledger's to wait out: a 429 (or a bucket run dry) is a transient failure
 * with Discord's `retry_after`.
 */
import type { Client } from "discord.js";
import type { Backoff } from "../kit/backoff.js";
import type {
  ChatPlatform,
  OutgoingChat,
  OutgoingFile,
  PlatformFailure,
  PlatformHandlers,
  ReceiveContext,
} from "../kit/chat-platform.js";
import { splitMessage } from "../kit/split-message.js";
import { addressOf, type DiscordAddress } from "./discord-address.js";
import { multipartMessage } from "./discord-multipart.js";
import { DISCORD_MESSAGE_LIMIT, renderMessage } from "./discord-render.js";
import { type DiscordRest, discordFailure, discordRest } from "./discord-rest.js";
import { DiscordSession } from "./discord-session.js";

export const DEFAULT_DISCORD_API_URL = "https://discord.com/api";

/** Discord's interaction callbacks: a message, or "seen" without changing the message. */
const CALLBACK_MESSAGE = 4;
const CALLBACK_DEFERRED_UPDATE = 6;
const EPHEMERAL_FLAG = 1 << 6;

export interface DiscordPlatformOptions {
  token: string;
  /** The REST base URL (`RUDDER_DISCORD_API_URL`); the gateway's URL comes from `/gateway/bot`. */
  apiUrl?: string | undefined;
  backoff?: Backoff | undefined;
}

export class DiscordPlatform implements ChatPlatform {
  readonly name = "discord";
  /** Two gateway connections of one bot would each get every event. */
  readonly exclusive = true;
  readonly limits = {
    messageLength: DISCORD_MESSAGE_LIMIT,
    // Discord allows about five edits in five seconds per channel.
    editIntervalMs: () => 1200,
  };
  readonly #options: DiscordPlatformOptions;
  #rest: Promise<DiscordRest> | undefined;
  /** Threads known to exist (started by us, seen, or refused as existing already). */
  readonly #threads = new Set<string>();
  /** Names for the threads mentions will open, by the mention's id. */
  readonly threadNames = new Map<string, string>();
  #commands: Array<{ command: string; description: string }> | undefined;
  #session: DiscordSession | undefined;

  constructor(options: DiscordPlatformOptions) {
    this.#options = options;
  }

  get botName(): string | undefined {
    return this.#session?.botName;
  }

  /** The REST client every call goes through (any worker sends, connected or not). */
  rest(): Promise<DiscordRest> {
    this.#rest ??= discordRest(
      this.#options.token,
      this.#options.apiUrl ?? DEFAULT_DISCORD_API_URL,
    );
    return this.#rest;
  }

  async receive(
    handlers: PlatformHandlers,
    signal: AbortSignal,
    context: ReceiveContext,
  ): Promise<void> {
    const rest = await this.rest();
    const session = new DiscordSession({
      token: this.#options.token,
      apiUrl: this.#options.apiUrl ?? DEFAULT_DISCORD_API_URL,
      backoff: this.#options.backoff,
      rest,
      handlers,
      context,
      platform: this,
    });
    this.#session = session;
    await session.run(signal);
  }

  /** Guild commands to register as each guild arrives (Discord has them per guild). */
  get commands(): Array<{ command: string; description: string }> | undefined {
    return this.#commands;
  }

  async setCommands(commands: Array<{ command: string; description: string }>): Promise<void> {
    this.#commands = commands;
    await this.#session?.registerCommands();
  }

  /** A thread the bot knows to exist (it needs no start before a send). */
  knowThread(threadId: string): void {
    this.#threads.add(threadId);
  }

  /**
   * Opens the thread of a mention before the first message to it: its id is the mention's.
   * Discord's "already created" (160004) means another worker or an earlier life opened it.
   */
  async #ensureThread(rest: DiscordRest, address: DiscordAddress): Promise<void> {
    if (address.guild === "dm" || address.thread === address.channel) return;
    if (this.#threads.has(address.thread)) return;
    const name = this.threadNames.get(address.thread) ?? "rudder";
    try {
      await rest.post(`/channels/${address.channel}/messages/${address.thread}/threads`, {
        body: { name: name.slice(0, 100) || "rudder", auto_archive_duration: 1440 },
      });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // 160004: a thread exists on it; 10008: not a message here (a thread of another kind).
      if (code !== 160004 && code !== 10008) throw error;
    }
    this.#threads.add(address.thread);
    this.threadNames.delete(address.thread);
  }

  async #target(channelId: string): Promise<{ rest: DiscordRest; address: DiscordAddress }> {
    const address = addressOf(channelId);
    if (address === null) throw new Error(`not a Discord channel: ${channelId}`);
    const rest = await this.rest();
    await this.#ensureThread(rest, address);
    return { rest, address };
  }

  async send(channelId: string, message: OutgoingChat, signal: AbortSignal): Promise<string> {
    const { rest, address } = await this.#target(channelId);
    if (message.reaction !== undefined && message.replyTo !== undefined) {
      const emoji = encodeURIComponent(message.reaction);
      // The message reacted to may sit in the parent channel (the mention that opened the thread).
      const where = message.replyTo === address.thread ? address.channel : address.thread;
      await rest.put(`/channels/${where}/messages/${message.replyTo}/reactions/${emoji}/@me`, {
        signal,
      });
      return message.replyTo;
    }
    const sent = (await rest.post(`/channels/${address.thread}/messages`, {
      body: renderMessage(message),
      signal,
    })) as { id: string };
    return sent.id;
  }

  /**
   * A message with the file attached (multipart: `files[0]` and `payload_json`), the caption
   * its text. A caption past 2,000 characters goes first in messages of its own, and its last
   * part with the file; the first message sent replies to `replyTo`.
   */
  async sendFile(channelId: string, file: OutgoingFile, signal: AbortSignal): Promise<string> {
    const { rest, address } = await this.#target(channelId);
    const parts = splitMessage(file.caption ?? "", DISCORD_MESSAGE_LIMIT);
    const last = parts.pop() ?? "";
    let replyTo = file.replyTo;
    for (const part of parts) {
      await rest.post(`/channels/${address.thread}/messages`, {
        body: renderMessage({ text: part, format: "markdown", ...(replyTo ? { replyTo } : {}) }),
        signal,
      });
      replyTo = undefined;
    }
    const body = renderMessage({ text: last, format: "markdown", ...(replyTo ? { replyTo } : {}) });
    const multipart = multipartMessage(
      { ...body, attachments: [{ id: 0, filename: file.name }] },
      file,
    );
    const sent = (await rest.post(`/channels/${address.thread}/messages`, {
      body: multipart.body,
      passThroughBody: true,
      headers: { "Content-Type": multipart.contentType },
      signal,
    })) as { id: string };
    return sent.id;
  }

  async edit(
    channelId: string,
    messageId: string,
    message: OutgoingChat,
    signal: AbortSignal,
  ): Promise<void> {
    const { rest, address } = await this.#target(channelId);
    const { message_reference: _reference, ...body } = renderMessage(message);
    await rest.patch(`/channels/${address.thread}/messages/${messageId}`, { body, signal });
  }

  /** The press's interaction answered: a refusal only its presser sees, or "seen". */
  async answerButton(pressId: string, text: string | undefined): Promise<void> {
    const [id, token] = pressId.split("/");
    const body =
      text === undefined
        ? { type: CALLBACK_DEFERRED_UPDATE }
        : { type: CALLBACK_MESSAGE, data: { content: text, flags: EPHEMERAL_FLAG } };
    const rest = await this.rest();
    await rest.post(`/interactions/${id}/${token}/callback`, { body, auth: false });
  }

  /** Answers a slash command at once (Discord waits three seconds) with the command itself. */
  async answerCommand(interactionId: string, token: string, text: string): Promise<void> {
    const rest = await this.rest();
    await rest.post(`/interactions/${interactionId}/${token}/callback`, {
      body: {
        type: CALLBACK_MESSAGE,
        data: { content: text, allowed_mentions: { parse: [] } },
      },
      auth: false,
    });
  }

  async typing(channelId: string): Promise<void> {
    const { rest, address } = await this.#target(channelId);
    await rest.post(`/channels/${address.thread}/typing`, { signal: AbortSignal.timeout(10_000) });
  }

  failure(error: unknown): PlatformFailure {
    return discordFailure(error);
  }

  redact(text: string): string {
    return this.#options.token === "" ? text : text.replaceAll(this.#options.token, "[token]");
  }

  /** For tests: the gateway client while connected. */
  get client(): Client | undefined {
    return this.#session?.client;
  }
}
