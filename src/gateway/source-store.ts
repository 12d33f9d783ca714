/**
 * What the gateway keeps for chat sources in its store (SQLite or PostgreSQL), lent to them
 * through `SourceContext.store`: the reply ledger (every outbound message written before it is
 * sent), pairing codes and the people they let in, and "allow always" grants per channel.
 */

/** What an outbound message is, for the ledger's readers and the chat's manners. */
export type OutboundKind = "answer" | "progress" | "approval" | "ack" | "notice";

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
   * that no entry carries: answers a gateway stored but was killed before it recorded them.
   */
  unrecorded(
    channelId: string,
    limit: number,
  ): Promise<Array<{ id: string; kind: string; text: string; createdAt: string }>>;
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

export interface SourceStore {
  outbound: OutboundLedger;
  pairings: PairingBook;
  grants: ChannelGrants;
}
