import { hostname } from "node:os";
import type {
  ChannelSource,
  SourceDeliver as Deliver,
  SourceContext,
} from "../../gateway/channel-source.js";
import type { GatewayEvent, MessageAttachment, StoredMessage } from "../../gateway/events.js";
import { GatewayClosedError } from "../../gateway/gateway-closed-error.js";
import { parseChannelCommand } from "../../gateway/routing/channel-command.js";
import type { SourceStore } from "../../gateway/store/source-store.js";
import { ApprovalCards } from "./approval-cards.js";
import { type AttachmentHandler, attachmentIntake } from "./attachment-intake.js";
import { DEFAULT_BACKOFF } from "./backoff.js";
import { ChatAccess } from "./chat-access.js";
import { answerChatCommand, parseCommand } from "./chat-commands.js";
import type {
  ButtonPress,
  IncomingChat,
  PlatformHandlers,
  ReceiveContext,
} from "./chat-platform.js";
import type { ChatSourceOptions } from "./chat-source-options.js";
import { killPoint } from "./kill-point.js";
import { acknowledgementReaction, acknowledgementText, MENU_COMMANDS } from "./kit-texts.js";
import { memorySourceStore } from "./memory-source-store.js";
import { ReplyOutbox } from "./reply-outbox.js";
import { TurnProgress } from "./turn-progress.js";
import { TypingIndicator } from "./typing-indicator.js";

/** How often the ledger is looked through again for what nobody is sending. */
const DEFAULT_RESCAN_MS = 30_000;

export type { AttachmentHandler };

interface Session {
  deliver: Deliver;
  context: SourceContext;
  store: SourceStore;
  outbox: ReplyOutbox;
  typing: TypingIndicator;
  progress: TurnProgress;
  approvals: ApprovalCards;
  access: ChatAccess;
  /** The source's own handler, else the gateway's media handling through the kit. */
  attachments: AttachmentHandler | undefined;
  signal: AbortSignal;
}

/**
 * A chat platform as a gateway channel source: what every chat source shares. A message from
 * someone allowed is delivered (stored first) to its channel, acknowledged when it arrives while
 * the agent works, and answered through the reply ledger; commands are routed (the gateway's
 * `/compact`, `/clear` and the like delivered, `/allow`, `/deny`, `/stop`, `/pair`, `/help`
 * answered here); the agent's steps show in one status message per turn; permission requests
 * are cards with buttons. Strangers get a pairing code. A rejected token stops the source with
 * one log line; the gateway runs on.
 */
export class ChatSource implements ChannelSource {
  readonly name: string;
  readonly #options: ChatSourceOptions;
  readonly #stopping = new AbortController();
  readonly #watched = new Map<string, () => void>();
  readonly #log: (line: string) => void;
  #loop: Promise<void> = Promise.resolve();
  #session: Session | undefined;

  constructor(options: ChatSourceOptions) {
    this.#options = options;
    this.name = options.platform.name;
    this.#log = options.logger ?? (() => {});
  }

  /** Sends taken again after a gateway died while sending them (counted for the chaos bench). */
  get recovered(): number {
    return this.#session?.outbox.recovered ?? 0;
  }

  async start(deliver: Deliver, context?: SourceContext): Promise<void> {
    if (!context) throw new Error(`the ${this.name} source needs the gateway's source context`);
    const { platform } = this.#options;
    const signal = AbortSignal.any([this.#stopping.signal, context.signal]);
    const store = context.store ?? memorySourceStore();
    const outbox = new ReplyOutbox({
      platform,
      ledger: store.outbound,
      worker: context.worker ?? `${hostname()}-${process.pid}`,
      signal,
      backoff: this.#options.backoff ?? DEFAULT_BACKOFF,
      sendTimeoutMs: this.#options.sendTimeoutMs,
      freshnessMs: this.#options.freshnessMs,
      now: this.#options.now,
      log: this.#log,
      onBadToken: (status) => this.#rejectToken(status),
      readSentFile: context.readSentFile?.bind(context),
      releaseSentFile: context.releaseSentFile?.bind(context),
    });
    const access = new ChatAccess(this.name, this.#options.allow, store.pairings, (channelId) =>
      context.allowFor?.(channelId),
    );
    await access.load();
    const session: Session = {
      deliver,
      context,
      store,
      outbox,
      typing: new TypingIndicator(platform, signal),
      progress: new TurnProgress(outbox, () => platform.limits.editIntervalMs(false)),
      approvals: new ApprovalCards(outbox, context.permissions, store.grants),
      access,
      attachments:
        this.#options.attachments ??
        (context.attachments ? attachmentIntake(context.attachments) : undefined),
      signal,
    };
    this.#session = session;
    if (access.pairingMode) {
      this.#log(
        `${this.name}: no allow-list: pairing mode (a stranger gets a code; approve it with rudder pairing approve ${this.name} CODE)`,
      );
    }
    const known = (await context.channelIds()).filter((id) => id.startsWith(`${this.name}:`));
    for (const channelId of known) this.#watch(session, channelId);
    await outbox.resume();
    for (const channelId of known) await this.#catchUp(session, channelId);
    // On a store several workers share, what a worker that died left unsent is taken here
    // too, once its claims run out (a claim decides between workers).
    const rescan = setInterval(
      () => void outbox.resume().catch(() => undefined),
      this.#options.rescanMs ?? DEFAULT_RESCAN_MS,
    );
    rescan.unref();
    signal.addEventListener("abort", () => clearInterval(rescan), { once: true });
    const commands = platform.setCommands?.(MENU_COMMANDS).catch(() => undefined);
    const handlers: PlatformHandlers = {
      message: (message, stored) => this.#message(session, message, stored),
      button: (press) => this.#button(session, press),
      badToken: (status) => this.#rejectToken(status),
      log: this.#log,
    };
    const receiveContext: ReceiveContext = {
      knownChannels: () => store.deliveries.channels(this.name),
    };
    platform.accept?.(handlers, signal, receiveContext);
    const receive = (receiving: AbortSignal) =>
      platform.receive(handlers, receiving, receiveContext);
    // One connection per cluster: only the worker holding the source's lease receives.
    const receiving = (
      platform.exclusive && context.exclusive
        ? context.exclusive(this.name, receive, signal)
        : receive(signal)
    ).catch((error: unknown) => this.#log(`${this.name}: receiving ended: ${describe(error)}`));
    this.#loop = Promise.all([commands, receiving])
      .then(() => outbox.idle())
      .finally(() => {
        for (const unsubscribe of this.#watched.values()) unsubscribe();
        this.#watched.clear();
      });
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#loop;
  }

  /** Resolves when receiving has ended: stopped, or the token was rejected. */
  finished(): Promise<void> {
    return this.#loop;
  }

  #rejectToken(status: number): void {
    if (this.#stopping.signal.aborted) return;
    const title = this.name.charAt(0).toUpperCase() + this.name.slice(1);
    this.#log(
      `${this.name}: the ${title} API rejected the bot token (${status}); the ${title} source stopped and the rest of the gateway runs on.${this.#options.badTokenHint ? ` ${this.#options.badTokenHint}` : ""}`,
    );
    this.#stopping.abort();
  }

  /**
   * Answers the channel's stored replies no ledger entry carries (the gateway was killed after
   * storing one, before recording it), each as it would have gone: its text, then its files.
   */
  async #catchUp(session: Session, channelId: string): Promise<void> {
    const missed = await session.store.outbound.unrecorded(channelId, 20).catch(() => []);
    for (const message of missed) {
      await this.#answer(
        session,
        { ...message, channelId },
        /^(reply|fallback)$/.test(message.kind),
      );
    }
  }

  async #message(
    session: Session,
    message: IncomingChat,
    onStored: () => void = () => {},
  ): Promise<void> {
    const key = message.deliveryKey;
    const { deliveries } = session.store;
    if (key !== undefined && !(await deliveries.claim(this.name, key))) {
      this.#log(`${this.name}: message ${key} was delivered before; dropped`);
      onStored();
      return;
    }
    // The claim is finished before the platform hears the message is taken: an acknowledged
    // message read again (a catch-up after a crash) must find its claim held for good.
    let finishing: Promise<void> | undefined;
    const finish = () => {
      finishing ??=
        key === undefined
          ? Promise.resolve()
          : deliveries.finish(this.name, key).catch((error: unknown) => {
              this.#log(`${this.name}: could not mark message ${key} taken: ${describe(error)}`);
            });
      return finishing;
    };
    let told = false;
    const stored = () => {
      if (told) return;
      told = true;
      void finish().then(onStored);
    };
    try {
      await this.#take(session, message, stored);
    } catch (error) {
      if (error instanceof GatewayClosedError) {
        // Not taken: the platform delivers it again after the restart, and that is claimed.
        if (key !== undefined) await deliveries.release(this.name, key).catch(() => undefined);
        throw error;
      }
      this.#log(`${this.name}: message ${message.messageId} failed: ${describe(error)}`);
      await session.outbox.send(message.channelId, "notice", {
        text: `Could not take the message: ${describe(error)}`,
        format: "plain",
      });
    }
    stored();
    await finish();
  }

  async #take(session: Session, message: IncomingChat, stored: () => void): Promise<void> {
    const { outbox, access } = session;
    const { channelId } = message;
    if (message.group && this.#options.groups !== "all" && !message.addressed) return;
    if (!(await access.allowed(message))) {
      if (message.group && this.#options.pairing === "direct") return;
      const answer = await access.stranger(message);
      if (answer === null) return;
      const who = message.userId === undefined ? "a message" : `user ${message.userId}`;
      this.#log(`${this.name}: refused ${who} in chat ${message.chatId} (not on the allow-list)`);
      await outbox.send(channelId, "notice", { text: answer, format: "plain" });
      return;
    }
    if (message.group) outbox.group(channelId);
    const card = message.replyTo && (await session.approvals.cardAt(channelId, message.replyTo));
    if (card && message.text.trim() !== "") {
      session.approvals.deciding(card, message.userName);
      await session.context.permissions.decide(channelId, card, "deny", message.text.trim());
      return;
    }
    const command = parseCommand(message.text);
    const botName = this.#options.platform.botName;
    if (command?.bot && botName && command.bot.toLowerCase() !== botName.toLowerCase()) return;
    if (command && parseChannelCommand(message.text) === null) {
      const answer = await answerChatCommand(command, message, {
        botName: this.#options.platform.botName,
        context: session.context,
        access,
        approvals: session.approvals,
      });
      if (answer !== null)
        await outbox.send(channelId, "notice", { text: answer, format: "plain" });
      return;
    }
    let text = message.text;
    let attachments: readonly MessageAttachment[] = [];
    if (message.attachments.length > 0 && session.attachments) {
      const handled = await session.attachments(message, session.signal);
      if ("answer" in handled) {
        await outbox.send(channelId, "notice", { text: handled.answer, format: "plain" });
        return;
      }
      text = handled.text;
      attachments = handled.attachments ?? [];
    }
    if (text.trim() === "" && attachments.length === 0) {
      await outbox.send(channelId, "notice", {
        text: session.attachments
          ? "Only text, photos, files and voice notes reach the agent."
          : "Only text messages reach the agent.",
        format: "plain",
      });
      return;
    }
    this.#watch(session, channelId);
    const meta = {
      ...message.meta,
      userName: message.userName,
      ...(attachments.length > 0 ? { attachments } : {}),
      // Its claim is finished in the write that stores it (`DeliveryClaim`).
      ...(message.deliveryKey === undefined ? {} : { deliveryKey: message.deliveryKey }),
    };
    const delivery = await session.deliver(channelId, text, meta, () => {
      killPoint("message-stored");
      stored();
    });
    const acknowledgement = acknowledgementText(delivery.disposition);
    if (acknowledgement !== null) {
      await outbox.send(channelId, "ack", {
        text: acknowledgement,
        format: "plain",
        replyTo: message.messageId,
        reaction: acknowledgementReaction(delivery.disposition),
      });
    }
    if (delivery.disposition !== "deferred") session.typing.start(channelId);
  }

  /** Records the answer and each file the agent sent with it, in one write, in that order. */
  async #answer(
    session: Session,
    message: Pick<StoredMessage, "id" | "channelId" | "text" | "files">,
    markdown: boolean,
  ): Promise<void> {
    await session.outbox.send(
      message.channelId,
      markdown ? "answer" : "notice",
      { text: message.text, format: markdown ? "markdown" : "plain" },
      message.id,
      message.files,
    );
  }

  async #button(session: Session, press: ButtonPress): Promise<void> {
    const { platform } = this.#options;
    let answer: string | undefined;
    if (!(await session.access.allowed(press))) {
      answer = "Only people allowed in this chat can decide.";
    } else {
      answer = await session.approvals.press(press).catch((error: unknown) => describe(error));
    }
    await platform.answerButton(press.pressId, answer).catch(() => undefined);
  }

  #watch(session: Session, channelId: string): void {
    if (this.#watched.has(channelId) || session.signal.aborted) return;
    const unsubscribe = session.context.subscribe(channelId, (event) =>
      this.#event(session, event),
    );
    this.#watched.set(channelId, unsubscribe);
  }

  #event(session: Session, event: GatewayEvent): void {
    const { channelId } = event;
    switch (event.type) {
      case "reply":
      case "fallback":
      case "error":
      case "notice": {
        session.progress.finish(channelId);
        session.typing.stop(channelId);
        const markdown = event.type === "reply" || event.type === "fallback";
        killPoint("reply-stored");
        void this.#answer(session, event.message, markdown).catch((error: unknown) => {
          this.#log(`${this.name}: an answer was not recorded: ${describe(error)}`);
        });
        return;
      }
      case "permission_request":
        session.typing.stop(channelId);
        void session.approvals.announce(event.request).catch((error: unknown) => {
          this.#log(`${this.name}: permission request not shown: ${describe(error)}`);
        });
        return;
      case "permission_resolved":
        if (event.decision === "allow") session.typing.start(channelId);
        void session.approvals.resolved(
          event.requestId,
          event.decision,
          event.resolvedBy,
          event.message,
        );
        return;
      default:
        session.progress.observe(event);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
