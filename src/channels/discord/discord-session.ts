/**
 * One Discord source's gateway connection while `receive` runs: a discord.js `Client` logged
 * in (tried again with backoff while Discord cannot be reached), its dispatches handled one at
 * a time in the order they came: messages and interactions to the kit's handlers, the bot's
 * identity from READY, each guild's slash commands registered as it arrives, threads the bot
 * opened remembered. Each new session (the first, and one that could not be resumed) starts
 * with a catch-up. A refused token (401, close 4004) calls `badToken`; a Message Content
 * intent not enabled (close 4014) is said in one line and receiving ends.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "discord.js";
import { type Backoff, backoffDelayMs, DEFAULT_BACKOFF } from "../kit/backoff.js";
import type { IncomingChat, PlatformHandlers, ReceiveContext } from "../kit/chat-platform.js";
import { addressOf } from "./discord-address.js";
import { catchUp } from "./discord-catch-up.js";
import { guildCommands } from "./discord-commands.js";
import {
  commandOf,
  commandText,
  type DiscordInteraction,
  type DiscordMessage,
  incomingOf,
  mentions,
  type Place,
  pressOf,
  withoutMention,
} from "./discord-incoming.js";
import type { DiscordRest } from "./discord-rest.js";

/** Guilds, guild messages, DMs, and the text of messages (privileged: enabled in the portal). */
export const DISCORD_INTENTS = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15);

export const MISSING_INTENT_TEXT =
  "discord: Discord refused the Message Content intent (close 4014): enable it for the bot in the Developer Portal (Bot, Privileged Gateway Intents, Message Content Intent) and restart; the Discord source stopped and the rest of the gateway runs on.";

/** Message types people write: a message, a reply. */
const PERSON_MESSAGE_TYPES = new Set([0, 19]);
/** Interactions: a slash command, a button. */
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;

/** What the session asks of its platform (the thread and command book-keeping it shares). */
export interface SessionPlatform {
  readonly commands: ReadonlyArray<{ command: string; description: string }> | undefined;
  /** Names for the threads mentions will open, by the mention's id. */
  readonly threadNames: Map<string, string>;
  knowThread(threadId: string): void;
  answerCommand(interactionId: string, token: string, text: string): Promise<void>;
}

export interface DiscordSessionOptions {
  token: string;
  apiUrl: string;
  backoff: Backoff | undefined;
  rest: DiscordRest;
  handlers: PlatformHandlers;
  context: ReceiveContext;
  platform: SessionPlatform;
}

interface Dispatch {
  t: string | null;
  d: unknown;
}

export class DiscordSession {
  readonly #options: DiscordSessionOptions;
  #queue: Promise<void> = Promise.resolve();
  /** Messages stored and still being routed (see `#untilStored`). */
  readonly #handling = new Set<Promise<void>>();
  #botId = "";
  #applicationId = "";
  botName: string | undefined;
  client: Client | undefined;
  readonly #guilds = new Set<string>();
  /** Threads that are conversations with the bot: their messages need no mention. */
  readonly #conversations = new Set<string>();
  #ended = new AbortController();
  #loggedIn = false;

  constructor(options: DiscordSessionOptions) {
    this.#options = options;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { handlers } = this.#options;
    const backoff = this.#options.backoff ?? DEFAULT_BACKOFF;
    const { Client, Events } = await import("discord.js");
    for (let failures = 0; !signal.aborted; ) {
      this.#ended = new AbortController();
      const client = new Client({ intents: DISCORD_INTENTS, rest: { api: this.#options.apiUrl } });
      this.client = client;
      client.on(Events.Raw, (packet: Dispatch) => this.#dispatch(packet));
      client.on(Events.ShardDisconnect, (event) => this.#closed(event.code));
      client.on(Events.ShardResume, () => handlers.log("discord: the gateway session resumed"));
      client.on(Events.Error, (error) => handlers.log(`discord: ${error.message}`));
      try {
        await client.login(this.#options.token);
        this.#loggedIn = true;
        failures = 0;
        await waitForAbort(AbortSignal.any([signal, this.#ended.signal]));
      } catch (error) {
        const fatal = this.#loginFailure(error);
        if (fatal) {
          await client.destroy().catch(() => undefined);
          break;
        }
        failures += 1;
        const delay = backoffDelayMs(failures, backoff);
        if (failures === 1 || failures % 10 === 0) {
          handlers.log(`discord: cannot connect: ${describe(error)}; trying again in ${delay} ms`);
        }
        await sleep(delay, undefined, { signal }).catch(() => undefined);
      } finally {
        this.#loggedIn = false;
        await client.destroy().catch(() => undefined);
        this.client = undefined;
      }
      if (this.#ended.signal.aborted && this.#ended.signal.reason === "fatal") break;
    }
    await this.#queue;
    while (this.#handling.size > 0) await Promise.all(this.#handling);
  }

  /** True when trying again cannot help (the token, the intent). */
  #loginFailure(error: unknown): boolean {
    const { handlers } = this.#options;
    const text = describe(error);
    const code = (error as { code?: unknown }).code;
    if (code === "TokenInvalid" || /authentication failed/i.test(text)) {
      handlers.badToken(401);
      return true;
    }
    if (/disallowed intents/i.test(text)) {
      handlers.log(MISSING_INTENT_TEXT);
      return true;
    }
    return false;
  }

  /** A close discord.js will not recover from, while connected. */
  #closed(code: number): void {
    // Before login resolved, the failure is the login's to read.
    if (!this.#loggedIn) return;
    if (code === 4004) this.#options.handlers.badToken(4004);
    else if (code === 4014) this.#options.handlers.log(MISSING_INTENT_TEXT);
    else this.#options.handlers.log(`discord: the gateway closed the connection (${code})`);
    this.#ended.abort("fatal");
  }

  #dispatch(packet: Dispatch): void {
    const job = () => this.#handle(packet);
    this.#queue = this.#queue
      .then(job)
      .catch((error: unknown) =>
        this.#options.handlers.log(`discord: ${packet.t ?? "event"} failed: ${describe(error)}`),
      );
  }

  async #handle(packet: Dispatch): Promise<void> {
    switch (packet.t) {
      case "READY":
        return this.#ready(
          packet.d as { user: { id: string; username: string }; application?: { id: string } },
        );
      case "GUILD_CREATE":
        return this.#guild(
          packet.d as { id: string; threads?: Array<{ id: string; owner_id?: string }> },
        );
      case "THREAD_CREATE": {
        const thread = packet.d as { id: string; owner_id?: string };
        if (thread.owner_id === this.#botId) this.#ours(thread.id);
        return;
      }
      case "MESSAGE_CREATE":
        return this.message(packet.d as DiscordMessage);
      case "INTERACTION_CREATE":
        return this.#interaction(packet.d as DiscordInteraction);
      default:
        return;
    }
  }

  async #ready(data: { user: { id: string; username: string }; application?: { id: string } }) {
    const { handlers, context, rest } = this.#options;
    const first = this.#botId === "";
    this.#botId = data.user.id;
    this.botName = data.user.username;
    this.#applicationId = data.application?.id ?? data.user.id;
    if (first) handlers.log(`discord: connected as @${data.user.username}`);
    const known = await context.knownChannels();
    // Conversations, but not known to exist: a life killed before its first send never opened
    // the thread, so the first send of this one asks (Discord answers 160004 when it exists).
    for (const { channelId } of known) {
      const address = addressOf(channelId);
      if (address && address.thread !== address.channel) this.#conversations.add(address.thread);
    }
    await catchUp(known, rest, (message) => this.message(message), handlers.log);
  }

  async #guild(guild: { id: string; threads?: Array<{ id: string; owner_id?: string }> }) {
    this.#guilds.add(guild.id);
    for (const thread of guild.threads ?? []) {
      if (thread.owner_id === this.#botId) this.#ours(thread.id);
    }
    await this.#register(guild.id);
  }

  #ours(threadId: string): void {
    this.#conversations.add(threadId);
    this.#options.platform.knowThread(threadId);
  }

  /** Registers the command menu in every guild known so far (again after a change). */
  async registerCommands(): Promise<void> {
    for (const guild of this.#guilds) await this.#register(guild);
  }

  async #register(guildId: string): Promise<void> {
    const commands = this.#options.platform.commands;
    if (commands === undefined || this.#applicationId === "") return;
    await this.#options.rest
      .put(`/applications/${this.#applicationId}/guilds/${guildId}/commands`, {
        body: guildCommands(commands),
      })
      .catch((error: unknown) =>
        this.#options.handlers.log(
          `discord: slash commands not registered in guild ${guildId}: ${describe(error)}`,
        ),
      );
  }

  /** Where a message or interaction was written; null for a channel it cannot read. */
  async #place(channelId: string, guildId: string | undefined): Promise<Place | null> {
    if (guildId === undefined) {
      const address = { guild: "dm", channel: channelId, thread: channelId };
      return { address, group: false, conversation: true };
    }
    const client = this.client;
    const channel =
      client?.channels.cache.get(channelId) ??
      (await client?.channels.fetch(channelId).catch(() => null));
    if (!channel) return null;
    if (channel.isThread()) {
      const address = { guild: guildId, channel: channel.parentId ?? channelId, thread: channelId };
      const ours = channel.ownerId === this.#botId || this.#conversations.has(channelId);
      return { address, group: true, conversation: ours, title: channel.name };
    }
    const address = { guild: guildId, channel: channelId, thread: channelId };
    return { address, group: true, conversation: false };
  }

  /** A person's message: live, or read back in a catch-up. */
  async message(message: DiscordMessage): Promise<void> {
    if (message.author.bot || !PERSON_MESSAGE_TYPES.has(message.type ?? 0)) return;
    const place = await this.#place(message.channel_id, message.guild_id);
    if (place === null) return;
    const mentioned = mentions(message, this.#botId);
    const { address } = place;
    if (place.group && address.thread === address.channel && mentioned) {
      // A mention in a channel opens a thread on it (with the mention's id) at the first send.
      address.thread = message.id;
      const name = withoutMention(message.content, this.#botId).split("\n")[0]?.trim();
      this.#options.platform.threadNames.set(message.id, name || "rudder");
      place.title = name || "rudder";
      this.#conversations.add(message.id);
    } else if (place.group && address.thread !== address.channel && mentioned) {
      this.#conversations.add(address.thread);
      place.conversation = true;
    }
    const fetch = (url: string, signal: AbortSignal) => download(url, signal);
    await this.#untilStored(incomingOf(message, place, this.#botId, fetch));
  }

  /**
   * Hands a message to the kit and resolves once it is stored (or clearly will not be), not
   * once it is routed: the next dispatch waits for the store only, so messages are stored in
   * the order they came, and a burst is not held in memory (lost to a kill) while agents start.
   * What follows the store goes on meanwhile; `run` waits for it at the end.
   */
  #untilStored(incoming: IncomingChat): Promise<void> {
    const { handlers } = this.#options;
    return new Promise<void>((resolve, reject) => {
      let taken = false;
      const stored = () => {
        taken = true;
        resolve();
      };
      const handling = handlers.message(incoming, stored).then(stored, (error: unknown) => {
        // Before the store it is the dispatch's failure (logged there); after, this one's.
        if (!taken) reject(error);
        else handlers.log(`discord: message ${incoming.messageId} failed: ${describe(error)}`);
      });
      this.#handling.add(handling);
      void handling.finally(() => this.#handling.delete(handling));
    });
  }

  async #interaction(interaction: DiscordInteraction): Promise<void> {
    const { handlers, platform } = this.#options;
    const channelId = interaction.channel_id;
    if (channelId === undefined) return;
    const place = await this.#place(channelId, interaction.guild_id);
    if (place === null) return;
    if (interaction.type === MESSAGE_COMPONENT) {
      const press = pressOf(interaction, place);
      if (press) await handlers.button(press);
      return;
    }
    if (interaction.type !== APPLICATION_COMMAND) return;
    const incoming = commandOf(interaction, place);
    if (incoming === null) return;
    await platform
      .answerCommand(interaction.id, interaction.token, commandText(interaction))
      .catch((error: unknown) =>
        handlers.log(`discord: slash command not answered: ${describe(error)}`),
      );
    await handlers.message(incoming);
  }
}

/** An attachment's bytes from its URL (Discord's CDN). */
async function download(url: string, signal: AbortSignal): Promise<Buffer> {
  const response = await fetch(url, { signal });
  if (!response.ok)
    throw new Error(`attachment download: ${response.status} ${response.statusText}`);
  return Buffer.from(await response.arrayBuffer());
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
