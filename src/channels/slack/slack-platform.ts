/**
 * Slack as a chat kit platform: Socket Mode in (messages, button presses, slash commands, each
 * envelope acknowledged once its message is stored, before it is routed; Slack sends again what
 * was not acknowledged, and the store's delivery claim drops the second copy), the Web API out
 * (`chat.postMessage` in the conversation's thread, `chat.update` for progress and cards,
 * reactions as acknowledgements). One conversation per thread: a mention or a DM starts one,
 * replies in a thread the bot is part of continue it without a mention. A 429 fails the call
 * with Retry-After for the reply ledger to wait out. `exclusive`: one Socket Mode connection per
 * cluster (the gateway holds it under a lease); the Events API over HTTP is taken on every
 * worker (`accept`), the store's delivery claim deciding between them.
 */
import type { SocketModeClient } from "@slack/socket-mode";
import type { WebClient } from "@slack/web-api";
import { type Backoff, DEFAULT_BACKOFF } from "../kit/backoff.js";
import type {
  ChatPlatform,
  OutgoingChat,
  OutgoingFile,
  PlatformFailure,
  PlatformHandlers,
  ReceiveContext,
} from "../kit/chat-platform.js";
import { slackChannelId } from "./slack-address.js";
import { catchUp, knownConversations } from "./slack-catch-up.js";
import { type SlackClients, slackClients } from "./slack-clients.js";
import type { Ack, SlackEnvelope, SocketEnvelope } from "./slack-envelope.js";
import { EnvelopeQueue } from "./slack-envelope-queue.js";
import {
  commandOf,
  downloadFile,
  incomingOf,
  pressOf,
  type SlackBlockActions,
  type SlackBot,
  type SlackMessageEvent,
  type SlackSlashCommand,
} from "./slack-events.js";
import { slackErrorName, slackFailure } from "./slack-failure.js";
import { SlackNames, signIn } from "./slack-identity.js";
import { SLACK_MESSAGE_LIMIT } from "./slack-message.js";
import { answerPress, postMessage, updateMessage, uploadFile } from "./slack-outgoing.js";
import { SlackReactions } from "./slack-reactions.js";
import { slashTarget } from "./slack-slash.js";
import { SlackThreads } from "./slack-threads.js";
import { SlackTitles } from "./slack-titles.js";

export interface SlackPlatformOptions {
  /** `xoxb-...`: the Web API. Never logged. */
  botToken: string;
  /** `xapp-...`: Socket Mode. Without it events arrive only over HTTP (the Events API). */
  appToken?: string | undefined;
  /** The Web API's base URL; default https://slack.com/api/. */
  apiUrl?: string | undefined;
  backoff?: Backoff | undefined;
  /** Socket Mode's wait before connecting again (times the failures), and for a pong; 5 s. */
  socketRetryMs?: number | undefined;
}

export class SlackPlatform implements ChatPlatform {
  readonly name = "slack";
  /** Two Socket Mode connections would each get a share of the events: one per cluster. */
  readonly exclusive = true;
  readonly limits = {
    messageLength: SLACK_MESSAGE_LIMIT,
    // chat.update is Tier 3 (about 50 a minute per workspace): an edit every 1.5 s per thread.
    editIntervalMs: () => 1500,
  };
  readonly #options: SlackPlatformOptions;
  readonly #threads = new SlackThreads();
  readonly #names = new SlackNames();
  readonly #titles = new SlackTitles(() => this.#requireWeb());
  readonly #reactions: SlackReactions;
  #clients: Promise<SlackClients> | undefined;
  #web: WebClient | undefined;
  #bot: SlackBot | undefined;
  #botName: string | undefined;
  readonly #queue = new EnvelopeQueue();
  #log: (line: string) => void = () => {};
  /** What every worker takes envelopes with (`accept`), whoever holds the connection. */
  #entry: Entry | undefined;
  #identified: Promise<boolean> | undefined;

  constructor(options: SlackPlatformOptions) {
    this.#options = options;
    this.#reactions = new SlackReactions(() => this.#web);
  }

  get botName(): string | undefined {
    return this.#botName;
  }

  /** Every worker: envelopes over HTTP are taken from now on (see `dispatch`). */
  accept(handlers: PlatformHandlers, signal: AbortSignal, context: ReceiveContext): void {
    this.#log = handlers.log;
    this.#entry = { handlers, signal, context };
    void this.#identify(handlers, signal);
  }

  async receive(
    handlers: PlatformHandlers,
    signal: AbortSignal,
    context: ReceiveContext,
  ): Promise<void> {
    this.#log = handlers.log;
    this.#entry ??= { handlers, signal, context };
    const { socket } = await this.#load();
    if (!(await this.#identify(handlers, signal))) return;
    if (socket === undefined) {
      handlers.log("slack: no app token: events only over HTTP (the Events API)");
      await this.#catchUp(handlers, signal, context);
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      await this.#queue.idle();
      return;
    }
    const unlisten = this.#listen(socket, handlers, signal, context);
    const stopped = new Promise<void>((resolve) =>
      signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    try {
      await Promise.race([socket.start(), stopped]);
    } catch (error) {
      if (!signal.aborted) {
        if (slackErrorName(error)?.match(/invalid_auth|not_authed|token_revoked|not_allowed/)) {
          handlers.log("slack: Slack refused the app token (apps.connections.open)");
          handlers.badToken(401);
        } else handlers.log(`slack: Socket Mode could not start: ${this.redact(describe(error))}`);
      }
    }
    await stopped;
    unlisten();
    await socket.disconnect().catch(() => undefined);
    await this.#queue.idle();
  }

  /** `auth.test` until it answers, once: the bot's user and team; false when refused. */
  #identify(handlers: PlatformHandlers, signal: AbortSignal): Promise<boolean> {
    this.#identified ??= (async () => {
      const { web } = await this.#load();
      const backoff = this.#options.backoff ?? DEFAULT_BACKOFF;
      const me = await signIn(web, handlers, signal, backoff, (text) => this.redact(text));
      if (me === undefined) return false;
      this.#bot = me.bot;
      this.#botName = me.name;
      return true;
    })();
    return this.#identified;
  }

  /** Listens to the socket's envelopes; returns what takes the listeners off again. */
  #listen(
    socket: SocketModeClient,
    handlers: PlatformHandlers,
    signal: AbortSignal,
    context: ReceiveContext,
  ): () => void {
    let connections = 0;
    // biome-ignore lint/suspicious/noExplicitAny: the Socket Mode client's events are untyped.
    const listeners: Record<string, (...args: any[]) => void> = {
      connected: () => {
        connections += 1;
        handlers.log(
          connections === 1
            ? "slack: connected (Socket Mode)"
            : "slack: connected again (Socket Mode)",
        );
        void this.#catchUp(handlers, signal, context);
      },
      slack_event: ({ type, body, ack, retry_num }: SocketEnvelope) =>
        this.dispatch({ type, body, ack, retry: (retry_num ?? 0) > 0 }),
    };
    for (const [name, listener] of Object.entries(listeners)) socket.on(name, listener);
    return () => {
      for (const [name, listener] of Object.entries(listeners)) socket.off(name, listener);
    };
  }

  /**
   * One envelope from Slack (Socket Mode, or the Events API over HTTP), taken in turn and
   * acknowledged once stored. False when the source has not started or has stopped: the
   * caller lets Slack send it again.
   */
  dispatch(envelope: SlackEnvelope): boolean {
    const entry = this.#entry;
    if (entry === undefined || entry.signal.aborted) return false;
    const { handlers, signal } = entry;
    const { body, ack } = envelope;
    switch (envelope.type) {
      case "events_api": {
        const event = (body as { event?: SlackMessageEvent }).event;
        if (event?.type !== "message") {
          void ack().catch(() => undefined);
          return true;
        }
        this.#sighted(event, !envelope.retry);
        this.#queue.add(signal, ack, (stored) => this.#message(handlers, event, signal, stored));
        return true;
      }
      case "interactive":
        this.#queue.add(signal, ack, () => this.#press(handlers, body as SlackBlockActions));
        return true;
      case "slash_commands":
        this.#queue.add(signal, ack, (stored, answer) =>
          this.#slash(handlers, body as SlackSlashCommand, answer, stored),
        );
        return true;
      default:
        void ack().catch(() => undefined);
        return true;
    }
  }

  /** Reads what the known conversations said since their last stored message (see catchUp). */
  async #catchUp(
    handlers: PlatformHandlers,
    signal: AbortSignal,
    context: ReceiveContext,
  ): Promise<void> {
    const known = await knownConversations(context).catch(() => []);
    for (const { address } of known) this.#threads.add(slackChannelId(address));
    const web = this.#web;
    if (known.length === 0 || web === undefined || signal.aborted) return;
    const read = async () => {};
    await catchUp(
      web,
      known,
      (event) =>
        this.#queue.add(signal, read, (stored) => this.#message(handlers, event, signal, stored)),
      handlers.log,
    );
  }

  async #message(
    handlers: PlatformHandlers,
    event: SlackMessageEvent,
    signal: AbortSignal,
    stored: () => void,
  ): Promise<void> {
    await this.#identified;
    const bot = this.#bot;
    if (bot === undefined || event.user === undefined) return;
    const userName = await this.#nameOf(event.user);
    if (event.thread_ts !== undefined && event.thread_ts !== event.ts) {
      const thread = { team: event.team ?? bot.teamId, channel: event.channel };
      const channelId = slackChannelId({ ...thread, threadTs: event.thread_ts });
      await this.#threads.lookUp(channelId, this.#entry?.context);
    }
    const reading = {
      bot,
      inThread: (channelId: string) => this.#threads.has(channelId),
      fetchFile: (url: string, fetchSignal: AbortSignal) =>
        downloadFile(url, this.#options.botToken, fetchSignal),
    };
    const incoming = incomingOf(event, reading, userName);
    if (incoming === null || signal.aborted) return;
    if (incoming.addressed) {
      this.#threads.add(incoming.channelId);
      const direct = !incoming.group;
      const title = await this.#titles.titleOf(incoming.channelId, event, userName, direct);
      if (title !== undefined) incoming.meta.chatTitle = title;
    }
    await handlers.message(incoming, stored);
  }

  /**
   * A live event's first sight, before it waits its turn in the queue: a message for the bot
   * gets its eyes at once (the acknowledgement people see, however long the queue), and its
   * thread is known from now on (a reply right behind it needs no mention). A message read
   * again (a retry) may be answered already: no eyes on it.
   */
  #sighted(event: SlackMessageEvent, firstSight: boolean): void {
    const bot = this.#bot;
    if (bot === undefined || event.user === undefined) return;
    const reading = {
      bot,
      inThread: (channelId: string) => this.#threads.has(channelId),
      fetchFile: () => Promise.reject(new Error("not fetched here")),
    };
    const incoming = incomingOf(event, reading, event.user);
    if (incoming === null || !incoming.addressed) return;
    this.#threads.add(incoming.channelId);
    if (firstSight && !incoming.text.startsWith("/")) {
      this.#reactions.received(incoming.channelId, event.channel, event.ts);
    }
  }

  async #press(handlers: PlatformHandlers, payload: SlackBlockActions): Promise<void> {
    await this.#identified;
    if (this.#bot === undefined) return;
    const press = pressOf(payload, this.#bot);
    if (press !== null) await handlers.button(press);
  }

  async #slash(
    handlers: PlatformHandlers,
    command: SlackSlashCommand,
    ack: Ack,
    stored: () => void,
  ): Promise<void> {
    await this.#identified;
    if (this.#bot === undefined) return;
    const team = command.team_id ?? this.#bot.teamId;
    const target = await slashTarget(command, team, this.#entry?.context);
    if ("answer" in target) {
      await ack({ response_type: "ephemeral", text: target.answer });
      return;
    }
    const userName = await this.#nameOf(command.user_id);
    const typed = { ...command, text: target.text };
    await handlers.message(commandOf(typed, target.channelId, userName), stored);
  }

  #nameOf(userId: string): Promise<string> {
    return this.#names.nameOf(this.#requireWeb(), userId);
  }

  async send(channelId: string, message: OutgoingChat, signal: AbortSignal): Promise<string> {
    signal.throwIfAborted();
    const { web } = await this.#load();
    const ts = await postMessage(web, channelId, message);
    this.#threads.add(channelId);
    if (message.format === "markdown" && message.buttons === undefined) {
      this.#reactions.answered(channelId);
    }
    return ts;
  }

  /** Into the conversation's thread with `files.uploadV2`, the caption as its comment. */
  async sendFile(channelId: string, file: OutgoingFile, signal: AbortSignal): Promise<string> {
    signal.throwIfAborted();
    const { web } = await this.#load();
    const id = await uploadFile(web, channelId, file);
    this.#threads.add(channelId);
    return id;
  }

  async edit(
    channelId: string,
    messageId: string,
    message: OutgoingChat,
    signal: AbortSignal,
  ): Promise<void> {
    signal.throwIfAborted();
    const { web } = await this.#load();
    await updateMessage(web, channelId, messageId, message);
  }

  async answerButton(pressId: string, text: string | undefined): Promise<void> {
    if (text === undefined) return;
    const { web } = await this.#load();
    await answerPress(web, pressId, text);
  }

  /** Slack shows no typing indicator for a bot's messages: the eyes reaction says it instead. */
  async typing(): Promise<void> {}

  failure(error: unknown): PlatformFailure {
    return slackFailure(error);
  }

  redact(text: string): string {
    let result = text.split(this.#options.botToken).join("xoxb-[redacted]");
    if (this.#options.appToken)
      result = result.split(this.#options.appToken).join("xapp-[redacted]");
    return result;
  }

  #requireWeb(): WebClient {
    if (this.#web === undefined) throw new Error("slack: the Web API client is not loaded");
    return this.#web;
  }

  #load(): Promise<SlackClients> {
    this.#clients ??= slackClients({
      botToken: this.#options.botToken,
      appToken: this.#options.appToken,
      apiUrl: this.#options.apiUrl,
      socketRetryMs: this.#options.socketRetryMs,
      log: (line) => this.#log(line),
      redact: (text) => this.redact(text),
    }).then((clients) => {
      this.#web = clients.web;
      return clients;
    });
    return this.#clients;
  }
}

interface Entry {
  handlers: PlatformHandlers;
  signal: AbortSignal;
  context: ReceiveContext;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
