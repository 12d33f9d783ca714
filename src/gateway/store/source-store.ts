/**
 * What the gateway keeps for chat sources in its store (SQLite or PostgreSQL), lent to them
 * through `SourceContext.store`: the reply ledger (every outbound message written before it is
 * sent), the inbound messages taken (by the platform's id), pairing codes and the people they let in, and "allow always" grants per channel.
 */

import type { SentFile } from "../events.js";

/** What an outbound message is, for the ledger's readers and the chat's manners. */
export type OutboundKind = "answer" | "progress" | "approval" | "ack" | "notice" | "file";

/**
 * `pending`: not sent yet (or to be tried again at `nextAt`); `sending`: a worker is sending it
 * now (a row left so by a killed gateway may have gone out); `sent`: the platform answered with
 * its id; `given_up`: too old to send (the freshness limit) or refused for good.
 */
export type OutboundState = "pending" | "sending" | "sent" | "given_up";

export interface NewOutbound {
  source: string;
  channelId: string;
  kind: OutboundKind;
  /** `send` a new message, or `edit` the message another entry (`target`) sent. */
  action: "send" | "edit";
  target?: string | undefined;
  /** The stored message this carries (a reply's id): at most one `send` entry each. */
  origin?: string | undefined;
  /** The source's rendering of it (JSON: text, buttons), read back when it is sent. */
  body: string;
}

export interface OutboundEntry extends Required<Omit<NewOutbound, "target" | "origin">> {
  id: string;
  target: string | null;
  origin: string | null;
  state: OutboundState;
  /** The platform's id of the message once sent (or, for an edit, of the message edited). */
  platformId: string | null;
  /** Sent again after a gateway died while sending it: the chat may show it twice. */
  mayRepeat: boolean;
  attempts: number;
  /** Not to be tried before this time (ISO), after a failure. */
  nextAt: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The reply ledger. `record` before the first try; `claim` before each try (false: another
 * worker holds it, or it is no longer unsent); `sent`, `retry` or `giveUp` after. An edit of a
 * target that already has an edit waiting replaces that edit's body (the newest text wins:
 * edits are idempotent). A claim taken from a `sending` row whose holder is gone sets
 * `mayRepeat` on it.
 */
export interface OutboundLedger {
  /** Null when an entry for `origin` exists already (a reply recorded twice). */
  record(entry: NewOutbound): Promise<OutboundEntry | null>;
  /**
   * The `send` entries of one stored message (its parts, then its files) in one write, in
   * order: all or none, so a gateway killed meanwhile leaves the message for `unrecorded`.
   * Entries whose `origin` is recorded already are left out; resolves to those recorded.
   */
  recordAll(entries: NewOutbound[]): Promise<OutboundEntry[]>;
  get(id: string): Promise<OutboundEntry | null>;
  claim(id: string, worker: string, leaseMs: number): Promise<OutboundEntry | null>;
  sent(id: string, platformId: string): Promise<void>;
  retry(id: string, nextAt: Date, error: string): Promise<void>;
  /** Gives the entry up and writes `line` in its channel's history (an `error` message). */
  giveUp(id: string, line: string): Promise<void>;
  /** The source's entries not yet sent nor given up, oldest first. */
  unsent(source: string): Promise<OutboundEntry[]>;
  /**
   * Replies, fallbacks, errors and notices stored in the channel after its first ledger entry
   * (in a channel with none yet, after its first message from the chat: the source named by
   * the channel id's prefix) that no entry carries: answers a gateway stored but was killed
   * before it recorded them, a conversation's first answer too.
   */
  unrecorded(channelId: string, limit: number): Promise<UnrecordedMessage[]>;
}

/** A stored message the ledger has no entry for (see `OutboundLedger.unrecorded`). */
export interface UnrecordedMessage {
  id: string;
  kind: string;
  text: string;
  createdAt: string;
  /** The files the agent sent with it, sent after its text as a live reply's are. */
  files?: SentFile[];
}

/** A stranger's request to be let in, by a short one-time code. */
export interface PairingRequest {
  source: string;
  code: string;
  userId: string;
  chatId: string;
  /** How the platform names them (first name, @handle), for the owner's list. */
  name: string;
  createdAt: string;
  expiresAt: string;
  approvedAt: string | null;
  approvedBy: string | null;
}

export interface PairingBook {
  /**
   * The user's unexpired code, or a new one; null when `maxPending` codes of the source wait
   * already (the newest strangers wait for one to expire or be approved).
   */
  request(
    fields: Pick<PairingRequest, "source" | "userId" | "chatId" | "name">,
    ttlMs: number,
    maxPending: number,
  ): Promise<PairingRequest | null>;
  /** Unexpired codes waiting, and approvals, of every source (or one). */
  list(source?: string): Promise<PairingRequest[]>;
  /** Approves an unexpired code (any case); null when there is none. */
  approve(source: string, code: string, by: string): Promise<PairingRequest | null>;
  /** The user ids approved on `source`. */
  approved(source: string): Promise<string[]>;
}

/** "Allow always in this channel": a tool, with the exact command for bash, or any input. */
export interface ChannelGrant {
  channelId: string;
  toolName: string;
  /** The exact command allowed, or null for every call of the tool. */
  command: string | null;
  grantedBy: string;
  createdAt: string;
}

export interface ChannelGrants {
  add(grant: Omit<ChannelGrant, "createdAt">): Promise<void>;
  list(channelId: string): Promise<ChannelGrant[]>;
}

/** One of a source's channels with stored history (see `InboundDeliveries.channels`). */
export interface KnownChannel {
  channelId: string;
  /** When its last user message was stored (ISO); undefined when it has none. */
  lastMessageAt: string | undefined;
}

/**
 * A chat message's claim (`InboundDeliveries.claim`), given with the message to the store: the
 * store finishes it in the write that stores the message, so a gateway killed just after
 * cannot take the platform's redelivery as a new message.
 */
export interface DeliveryClaim {
  source: string;
  key: string;
}

/** A claim not finished this long is taken to be a dead worker's (PostgreSQL). */
export const UNFINISHED_CLAIM_MS = 5 * 60 * 1000;

/** How long a delivery key is remembered: a redelivery comes within minutes, never weeks. */
export const DELIVERY_KEY_DAYS = 14;

/**
 * The platform messages chat sources took, each by the platform's own stable id of it
 * (`IncomingChat.deliveryKey`), so that a message delivered twice (a redelivery after a lost
 * acknowledgement, another worker, a catch-up that reads it again) is taken once.
 */
export interface InboundDeliveries {
  /**
   * True the first time `(source, key)` is claimed through any worker; false after. A claim
   * never finished (its gateway was killed while handling the message, before it was stored)
   * is let go: at once when the SQLite file is opened again, after `UNFINISHED_CLAIM_MS` on
   * PostgreSQL, so the platform's redelivery is taken. Claims older than `DELIVERY_KEY_DAYS`
   * are pruned.
   */
  claim(source: string, key: string): Promise<boolean>;
  /** The message was stored (or answered): its claim holds for good. */
  finish(source: string, key: string): Promise<void>;
  /** The message was not taken after all (the gateway is closing): a redelivery may claim it. */
  release(source: string, key: string): Promise<void>;
  /** The source's channels (`<source>:...`) the store has history of, for a catch-up. */
  channels(source: string): Promise<KnownChannel[]>;
}

export interface SourceStore {
  outbound: OutboundLedger;
  deliveries: InboundDeliveries;
  pairings: PairingBook;
  grants: ChannelGrants;
}
