import type { PermissionRequests } from "./agents/permission-requests.js";
import type { Disposition, GatewayEvent, MessageAttachment, SentFile } from "./events.js";
import type { SourceStore } from "./store/source-store.js";

/** Extra facts an inbound source attaches to a message (sender, thread, platform ids). */
export type DeliveryMeta = Record<string, unknown> & {
  /**
   * The files that came with the message, as `SourceAttachments.receive` saved them: stored
   * with the message, images shown to the model from there (never from the message's text).
   */
  attachments?: readonly MessageAttachment[] | undefined;
};

/** What `SourceAttachments.receive` resolves to: the message to deliver, or an answer. */
export type ReceivedFiles = { text: string; attachments: MessageAttachment[] } | { answer: string };

/**
 * A file that came with a message, its bytes in hand: an image the model should see, a file
 * for the workspace, or a voice note (or other audio) to transcribe.
 */
export interface InboundFile {
  kind: "image" | "file" | "voice";
  /** As the sender named it, if they did; the gateway sanitises it. */
  name: string | undefined;
  mediaType: string | undefined;
  data: Buffer;
}

/** What a source gets for a message's files: the gateway's media handling. */
export interface SourceAttachments {
  /** The largest file taken, in bytes; a bigger one is refused with an answer. */
  readonly maxBytes: number;
  /**
   * Saves the files into the channel's workspace (its `inbox/` folder, names sanitised, never
   * overwriting), voice notes transcribed when a transcriber is configured. Resolves to the
   * message to deliver, its `attachments` to deliver with it (`DeliveryMeta.attachments`: an
   * image among them is shown to the model) and its `text`: `text` with a line for each file
   * that is not shown as an image (where it was saved, its size and type, a transcript); or to
   * an answer for the sender instead (too big, nowhere to save it). Never rejects.
   */
  receive(
    channelId: string,
    text: string,
    files: readonly InboundFile[],
    signal: AbortSignal,
  ): Promise<ReceivedFiles>;
}

/** What routing answers a source for each message it delivers. */
export interface SourceDelivery {
  id: string;
  disposition: Disposition;
}

/**
 * What the gateway lends a source besides `deliver`, so a chat adapter can
 * answer on its platform.
 */
export interface SourceContext {
  /** A channel's events from now on (nothing buffered is replayed). Returns the unsubscribe. */
  subscribe(channelId: string, listener: (event: GatewayEvent) => void): () => void;
  /** Every channel id the store knows, e.g. to answer a platform's chats again after a restart. */
  channelIds(): Promise<string[]>;
  /** The permission requests agents wait on, as the API and the page answer them. */
  permissions: Pick<PermissionRequests, "list" | "decide">;
  /** Aborted when the gateway shuts down (before `stop()` is called). */
  signal: AbortSignal;
  /**
   * The reply ledger, pairings and grants in the gateway's store. Absent in an embedder's own
   * context: a chat source then keeps them in memory (lost at a restart).
   */
  store?: SourceStore;
  /** This gateway worker's name, as it claims ledger entries (default: the process's). */
  worker?: string;
  /**
   * Interrupts the channel's running turn (its process lives on); resolves to false when no
   * turn runs. Absent where the gateway cannot yet: a chat's `/stop` then says so.
   */
  interrupt?(channelId: string): Promise<boolean>;
  /**
   * Who may talk in a channel, when the binding it uses (the gateway's configuration file,
   * as it stands now) carries an `allow` list: user ids, chat or channel ids, `role:<id>`.
   * Undefined: the source's own allow-list applies.
   */
  allowFor?(channelId: string): readonly string[] | undefined;
  /**
   * One connection per cluster: runs `receive` each time this worker takes the lease
   * `source:<name>` (renewed with the channel leases; taken over within two lease periods when
   * its holder dies), with a signal that aborts when the lease is lost or `signal` aborts.
   * Resolves once `signal` aborts, or when `receive` ends on its own while the lease is held
   * (the source gave up: a rejected token). Absent without a shared store: one worker, so the
   * source just receives.
   */
  exclusive?(
    name: string,
    receive: (signal: AbortSignal) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void>;
  /** Media handling: a message's files into the workspace and to the model. */
  attachments?: SourceAttachments;
  /**
   * The bytes of a file the agent sent (a reply's `files`), read from the channel's workspace
   * now (inside it, no link followed, within the size cap); rejects with a one-line reason
   * (gone, too big). Absent: a source tells the chat in text where the file is instead.
   */
  readSentFile?(channelId: string, file: SentFile, signal: AbortSignal): Promise<Buffer>;
  /** A file sent went out (or was given up): the copy the gateway kept of it may go. */
  releaseSentFile?(file: SentFile): Promise<void>;
}

/**
 * One inbound channel source. The HTTP API (and the web page through it) is
 * the first; the scheduler posts through the same `deliver`.
 *
 * A chat adapter (Telegram, Slack, Discord) plugs in without touching routing:
 * `start(deliver)` connects to the platform and, for each incoming message,
 * calls `deliver(channelId, text, meta)` with a channel id it derives from the
 * platform (e.g. `telegram:<chat id>`; ids match `[A-Za-z0-9._:-]{1,128}`).
 * `deliver` resolves once the message is stored and routed (see `SourceDeliver`). To answer on the
 * platform the adapter subscribes to the channel's events through `context`
 * and posts `reply`, `fallback` and `error` messages back. `stop()` disconnects; the gateway calls it on shutdown.
 */
/**
 * A source's own HTTP entry for its platform's callbacks (Slack's Events API): mounted on the
 * gateway's HTTP server at `path` for POST, before the token check (the source verifies the
 * platform's signature itself).
 */
export interface SourceWebhook {
  readonly path: string;
  handle(request: Request): Promise<Response>;
}

/**
 * Stores a message and routes it; resolves once it is stored and its route chosen. `stored`, when
 * given, is called as soon as the message is in the store, before it is routed: a platform
 * that must be acknowledged quickly (Slack's 3 seconds) is acknowledged then. Not called when
 * the message was not stored (the gateway closing: `GatewayClosedError`).
 */
export type SourceDeliver = (
  channelId: string,
  text: string,
  meta?: DeliveryMeta,
  stored?: () => void,
) => Promise<SourceDelivery>;

export interface ChannelSource {
  readonly name: string;
  /** Platform callbacks over HTTP, when the source takes them. */
  readonly webhook?: SourceWebhook | undefined;
  start(deliver: SourceDeliver, context?: SourceContext): Promise<void>;
  stop(): Promise<void>;
}

/** Channel ids every source must produce, so they are safe in URLs, logs and file names. */
export const CHANNEL_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Channel ids never begin so: the lease table keys sources' leases `source:<name>` beside the
 * channels' (see cluster/source-leases.ts).
 */
export const RESERVED_CHANNEL_PREFIX = "source:";

export function isValidChannelId(channelId: string): boolean {
  return CHANNEL_ID_PATTERN.test(channelId) && !channelId.startsWith(RESERVED_CHANNEL_PREFIX);
}
