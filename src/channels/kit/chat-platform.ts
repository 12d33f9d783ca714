/**
 * The contract between the chat kit and one platform (Telegram, Slack, Discord): what a source
 * implements. The platform receives updates and turns them into `IncomingChat` and
 * `ButtonPress`; it sends, edits and answers buttons; it says what its limits are and how to
 * read its failures. Everything else (who may talk, pairing, commands, the reply ledger,
 * progress, approvals, acknowledgements) is the kit's, in `ChatSource`.
 */

/** A file someone sent with a message, fetched only when a handler wants its bytes. */
export interface Attachment {
  kind: "photo" | "document" | "voice" | "audio" | "video" | "other";
  /** As the sender named it (documents), else undefined. */
  name?: string | undefined;
  mimeType?: string | undefined;
  /** In bytes, when the platform says before the download. */
  size?: number | undefined;
  /** Downloads it; rejects with the platform's error. */
  fetch(signal: AbortSignal): Promise<Buffer>;
}

/** One message someone wrote to the bot, as the platform reports it. */
export interface IncomingChat {
  /** `<source>:<chat>[:<thread>]`: the gateway channel the chat (or forum topic) is. */
  channelId: string;
  /** The platform's chat id, for the allow-list (a whole chat may be allowed). */
  chatId: string;
  /** The sender's platform id, when there is a sender. */
  userId: string | undefined;
  /** How to name the sender to people ("Ada (@ada)"). */
  userName: string;
  /** The text, or a media message's caption; "" when there is none. */
  text: string;
  /** The platform's id of this message (acknowledgements reply to it). */
  messageId: string;
  /**
   * The platform's stable identity of this message, unique within the source (Slack:
   * `<channel id>:<message ts>`; Discord: the message snowflake; Telegram:
   * `<chat>:<message_id>`). When set, the kit claims it in the store before handling the
   * message, and a second delivery of it (a redelivery, another worker, a catch-up that reads
   * it again) is dropped with a log line.
   */
  deliveryKey?: string | undefined;
  /** The sender's roles where the platform has them (Discord), for `role:<id>` allow entries. */
  roles?: string[] | undefined;
  /** A chat of several people, where the bot answers only when addressed (see `groups`). */
  group: boolean;
  /** Mentioned by name, replying to one of the bot's messages, or a command for this bot. */
  addressed: boolean;
  /** The platform id of the message this one replies to, if any (a denial's reason). */
  replyTo: string | undefined;
  /** Files sent with it: the hook for media handling (`ChatSourceOptions.attachments`). */
  attachments: Attachment[];
  /** Extra meta the platform adds to the delivery (`chatId`, `messageId`, ...). */
  meta: Record<string, unknown>;
}

/** Someone pressed one of the bot's buttons. */
export interface ButtonPress {
  channelId: string;
  chatId: string;
  userId: string;
  userName: string;
  /** The button's `data`, as the kit set it. */
  data: string;
  /** Answer with `answerButton` (the platform's spinner waits for it). */
  pressId: string;
  /** The platform id of the message the button is on. */
  messageId: string;
  /** The presser's roles where the platform has them (Discord), for `role:<id>` allow entries. */
  roles?: string[] | undefined;
}

export interface Button {
  label: string;
  /** At most 64 bytes (Telegram's `callback_data`). */
  data: string;
}

/** A message as the kit asks a platform to send it. */
export interface OutgoingChat {
  /** Markdown (the agent's) or plain text (the kit's own words, people's names). */
  text: string;
  format: "markdown" | "plain";
  /** Rows of buttons under the message; an empty list removes them (on an edit). */
  buttons?: Button[][];
  /** Sent as a reply to this platform message id, when the platform can. */
  replyTo?: string;
  /**
   * An acknowledgement's emoji: a platform that reacts to messages (Discord) may put it on
   * `replyTo` instead of sending the text, and resolve to `replyTo`.
   */
  reaction?: string;
}

/**
 * A file the agent sends to the conversation (its `send_file` tool): the kit has read it from
 * the channel's workspace (judged inside it, within the size cap) before the platform sees it.
 */
export interface OutgoingFile {
  /** The file's name as people should see it (`report.pdf`). */
  name: string;
  /** Its media type (`image/png`, `application/pdf`, `application/octet-stream`). */
  mediaType: string;
  data: Buffer;
  /** Markdown shown with the file (a platform without captions sends it as a message after). */
  caption?: string | undefined;
  /** Sent as a reply to this platform message id, when the platform can. */
  replyTo?: string | undefined;
}

export interface PlatformLimits {
  /** Characters one message may hold after rendering (Telegram: 4096). */
  messageLength: number;
  /** Least time between two edits of messages in one chat (Telegram: ~1 s, groups 3 s). */
  editIntervalMs(group: boolean): number;
}

/**
 * What a failed platform call means for the ledger: try again (after `retryAfterMs` when the
 * platform said so: a 429's `retry_after`), give up on this message (refused for good), the
 * markup was refused (send it again as plain text), or the token is wrong (stop the source).
 */
export type PlatformFailure =
  | { kind: "transient"; retryAfterMs?: number }
  | { kind: "refused" }
  | { kind: "markup" }
  | { kind: "unchanged" }
  | { kind: "bad_token" };

/** What the kit gives a platform's receiving loop. */
export interface PlatformHandlers {
  /**
   * Resolves once the message is stored and routed (or answered): then confirm it. `stored`,
   * when given, is called earlier: as soon as the message is in the store (its delivery key
   * claimed for good), or once it is clear it will not be stored (not for the bot, a stranger's,
   * a duplicate, answered here). A platform that must acknowledge quickly (Slack's 3 seconds)
   * acknowledges then and need not wait for routing. Never called when the gateway refused the
   * message because it is closing (the promise rejects with `GatewayClosedError`).
   */
  message(message: IncomingChat, stored?: () => void): Promise<void>;
  button(press: ButtonPress): Promise<void>;
  /** The platform rejected the token: the source stops, the gateway runs on. */
  badToken(status: number): void;
  log(line: string): void;
}

/** What the kit tells a platform's receiving loop about the store (the third argument of `receive`). */
export interface ReceiveContext {
  /**
   * This source's channels with history in the store, each with the time (ISO) of its last
   * stored user message: where to read what was missed after downtime or a dropped
   * connection. Reading a message again is harmless when it carries a `deliveryKey`.
   */
  knownChannels(): Promise<Array<{ channelId: string; lastMessageAt: string | undefined }>>;
}

export interface ChatPlatform {
  /** The source's name and channel prefix: `telegram`. */
  readonly name: string;
  /**
   * One connection per cluster: `receive` runs only on the worker holding the lease
   * `source:<name>` (on SQLite, always), and its signal aborts when that lease is lost.
   * Sending and editing work from any worker.
   */
  readonly exclusive?: boolean;
  readonly limits: PlatformLimits;
  /** The bot's name on the platform (for `/cmd@bot` and mentions), once known. */
  readonly botName: string | undefined;
  /**
   * Receives updates until `signal` aborts or the token is rejected, calling `handlers` in
   * order, one at a time; backs off on failures. Resolves when it stops.
   */
  receive(handlers: PlatformHandlers, signal: AbortSignal, context: ReceiveContext): Promise<void>;
  /**
   * Entries every worker takes, whoever holds the connection (Slack's Events API over HTTP):
   * called once on every worker when the source starts, before `receive`, with the handlers
   * and context `receive` gets and the source's own signal. The store's delivery claim keeps
   * what several workers take from being taken twice.
   */
  accept?(handlers: PlatformHandlers, signal: AbortSignal, context: ReceiveContext): void;
  /** Sends a message to a channel; resolves to the platform's id of it. */
  send(channelId: string, message: OutgoingChat, signal: AbortSignal): Promise<string>;
  /**
   * Sends a file (an image as a photo where the platform shows one inline); resolves to the
   * platform's id of the message that carries it. Absent: the kit tells the conversation in
   * text that this platform cannot carry files. Failures are read by `failure`, as `send`'s.
   */
  sendFile?(channelId: string, file: OutgoingFile, signal: AbortSignal): Promise<string>;
  /** Replaces a sent message's text (and buttons). */
  edit(
    channelId: string,
    messageId: string,
    message: OutgoingChat,
    signal: AbortSignal,
  ): Promise<void>;
  /** Answers a button press (the refusal shown to someone not allowed, say). */
  answerButton(pressId: string, text: string | undefined): Promise<void>;
  /** Shows "typing..." once (the kit repeats it). Best effort. */
  typing(channelId: string): Promise<void>;
  /** Publishes the bot's command menu. Best effort. */
  setCommands?(commands: Array<{ command: string; description: string }>): Promise<void>;
  /** What a failed `send`, `edit` or `answerButton` means. */
  failure(error: unknown): PlatformFailure;
  /** Removes secrets (the token) from text meant for logs. */
  redact(text: string): string;
}
