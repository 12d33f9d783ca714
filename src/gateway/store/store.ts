import type { ContextUsage } from "../agents/context-usage.js";
import type { MessageAttachment, MessageState, SentFile, StoredMessage } from "../events.js";
import type { ChannelSettings } from "./channel-settings.js";
import type { DeliveryClaim, SourceStore } from "./source-store.js";
import type { StoreHealth } from "./store-health.js";
import type { TranscriptChunks } from "./transcript-chunks.js";
import type { TurnDisplays } from "./turn-displays.js";

/** A channel as the store keeps it. */
export interface ChannelRecord {
  id: string;
  /** The agent's session id, so a restarted gateway resumes the conversation. */
  sessionId: string | null;
  createdAt: string;
  lastActivityAt: string;
  /** How full the conversation was after its last turn or compaction; null when unknown. */
  context: ContextUsage | null;
  /** The name given to it on the page (see `ChannelSettings`); null when none. */
  title: string | null;
  /** Its chat's own title on its platform, when its source said it; null otherwise. */
  chatTitle: string | null;
  /** When it was archived (hidden from the page's list, kept); null when it is not. */
  archivedAt: string | null;
}

/** A stored message with the bookkeeping the router needs. */
export interface MessageRecord extends StoredMessage {
  /** Gateway runs in which an agent started on the message (see `countStarted`). */
  attempts: number;
  /** Gateway runs that handed the message to an agent, seen by it or not. */
  deliveries: number;
  /** When a `deferred` message will be tried again. */
  retryAt: string | null;
  /** Who delivered it: `http`, `schedule:<id>`, or an adapter's name. */
  source: string;
  updatedAt: string;
}

/** What one agent turn cost and how it ended; kept per user message that started it. */
export interface TurnRecord {
  result: string;
  costUsd: number | null;
  usage: unknown;
  durationMs: number | null;
  numTurns: number | null;
  isError: boolean;
  subtype: string | null;
  sessionId: string | null;
  /** The binding the channel used for the turn (its spend counts there), null for the defaults. */
  binding?: string | null;
  /** Tokens the turn's model calls read (cache reads and writes included) and wrote. */
  inputTokens?: number;
  outputTokens?: number;
}

/** What the turns of one channel (under one binding) spent since a time; see `spendSince`. */
export interface SpendTotal {
  channelId: string;
  binding: string | null;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Spend no settled turn's record holds: a wake-up's (an agent's turn of its own after a
 * background task), a `/compact`'s, or a running turn's so far (`turn`: replaced by the turn's
 * record once it is settled, kept when it never is, as when the gateway was killed mid-turn).
 */
export interface SpendEntry {
  /** Unique; a second write with the same id replaces the first (a running turn's progress). */
  id: string;
  channelId: string;
  binding: string | null;
  kind: "turn" | "wake" | "compact";
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

export interface ScheduleRecord {
  id: string;
  cron: string;
  channelId: string;
  prompt: string;
  paused: boolean;
  consecutiveFailures: number;
  lastRunAt: string | null;
  nextRunAt: string | null;
  lastError: string | null;
  createdAt: string;
}

export interface NewSchedule {
  cron: string;
  channelId: string;
  prompt: string;
}

/** The outcome written for a group of user messages one turn (or one failure) covers. */
export interface Settlement {
  /** The user messages settled; the first is the one the reply answers. */
  messageIds: string[];
  state: Extract<MessageState, "answered" | "failed" | "deferred">;
  reply: { kind: "reply" | "fallback" | "error" | "compaction" | "reset"; text: string };
  /** For `deferred`. */
  retryAt?: string;
  turn?: TurnRecord;
  /**
   * How full the channel's context is now (what `setChannelContext` stores), written with the
   * answer: the turn's result said so just before it is settled, so one write does for both.
   */
  context?: ContextUsage | null;
  /**
   * What the page showed of the turn (`TurnDisplays`' JSON), kept by the reply in the same
   * write, so the reply is never read without it.
   */
  display?: string;
  /** The files the agent sent in the turn (`send_file`), kept with the reply in the same write. */
  files?: SentFile[];
}

/**
 * Everything the gateway persists. Async so that a networked database (see
 * ARCHITECTURE.md: PostgreSQL with leases) can replace SQLite behind it.
 * Each method is atomic on its own. Session files are kept as chunks (`TranscriptChunks`).
 */
export interface GatewayStore extends TranscriptChunks {
  /**
   * Whether the store can be written now, for a store whose writes can fail for a while (the
   * database away, the disk full, a lock held elsewhere). While it cannot, writes reject with a
   * `StoreUnavailableError` saying why (the API's 503); see `patientWrites`.
   */
  readonly health?: StoreHealth;
  listChannels(): Promise<ChannelRecord[]>;
  getChannel(channelId: string): Promise<ChannelRecord | null>;
  /** Null forgets the session: the channel's next message starts a new conversation. */
  setChannelSession(channelId: string, sessionId: string | null): Promise<void>;
  setChannelContext(channelId: string, usage: ContextUsage | null): Promise<void>;

  /**
   * Creates the channel if needed and stores the message in state `received`. With `handedTo`
   * (a gateway run), also counts it as handed over by that run, as `setMessageState(id,
   * "received", run)` would: how the router stores a message it gives an agent at once, in one
   * write instead of two, one after the other, before the agent may read it. `attachments`: the
   * files that came with it (kept in the same row; see `MessageAttachment`). `claim`: the chat
   * message's delivery claim, finished in the same write (see `DeliveryClaim`).
   */
  insertUserMessage(
    channelId: string,
    text: string,
    source: string,
    handedTo?: string,
    attachments?: readonly MessageAttachment[],
    claim?: DeliveryClaim,
  ): Promise<MessageRecord>;
  /**
   * A system notice (no reply to anything): an `error` such as a schedule pausing itself
   * (the default), or a `compaction` / `reset` divider.
   */
  insertSystemMessage(
    channelId: string,
    text: string,
    kind?: "error" | "compaction" | "reset",
  ): Promise<MessageRecord>;
  /**
   * Something the agent said on its own, answering no user message: a rudder
   * agent's turn after a background task finished.
   */
  insertAgentMessage(
    channelId: string,
    text: string,
    kind: "reply" | "error",
  ): Promise<MessageRecord>;
  getMessage(messageId: string): Promise<MessageRecord | null>;
  /** In order, the latest `limit` (default all): user messages and everything answered to them. */
  listMessages(channelId: string, limit?: number): Promise<MessageRecord[]>;
  /**
   * Moves a user message on (never off `answered`). With `run`, the id of the gateway run
   * handing it to an agent now, also counts one delivery, at most once per run.
   */
  setMessageState(messageId: string, state: MessageState, run?: string): Promise<void>;
  /** Counts one attempt: an agent of gateway run `run` started on it. At most once per run. */
  countStarted(messageId: string, run: string): Promise<void>;
  /**
   * Commits at once what was written but is not committed yet (SQLite commits the writes of a
   * turn of the event loop together); the gateway calls it before it writes to an agent. A
   * store that commits each write as it goes has nothing to do.
   */
  commitPending?(): void;
  /**
   * Writes the reply and moves every message in `messageIds` that is not yet
   * `answered` to `state`, in one transaction. Returns the reply, or null when
   * every message was already answered (so nothing is answered twice).
   */
  settle(settlement: Settlement): Promise<MessageRecord | null>;
  /** User messages still `received` or `steered`, oldest first: what a restart replays. */
  listUnanswered(): Promise<MessageRecord[]>;
  /** `deferred` user messages, oldest first. */
  listDeferred(): Promise<MessageRecord[]>;
  /**
   * What the turns stored at or after `since` (ISO time) spent, per channel and binding: what
   * budgets count, the same for every worker and after a restart.
   */
  spendSince(since: string): Promise<SpendTotal[]>;
  /** Writes (or, by its id, replaces) a spend entry, dated now; `spendSince` counts it. */
  putSpend(entry: SpendEntry): Promise<void>;
  /** Removes a spend entry (a running turn's, once the turn's record holds its spend). */
  deleteSpend(entryId: string): Promise<void>;

  listSchedules(): Promise<ScheduleRecord[]>;
  getSchedule(scheduleId: string): Promise<ScheduleRecord | null>;
  insertSchedule(schedule: NewSchedule, nextRunAt: string | null): Promise<ScheduleRecord>;
  deleteSchedule(scheduleId: string): Promise<boolean>;
  updateSchedule(
    scheduleId: string,
    change: Partial<
      Pick<
        ScheduleRecord,
        "paused" | "consecutiveFailures" | "lastRunAt" | "nextRunAt" | "lastError"
      >
    >,
  ): Promise<ScheduleRecord | null>;

  /**
   * Only a store several workers share (PostgreSQL): the API token all of them accept, the
   * stored one, or `candidate` stored now when there is none yet (the first worker's).
   */
  sharedToken?(candidate: string): Promise<string>;

  /**
   * Marks the page-link code `nonce` as traded: true the first time, false after, across
   * restarts (and, with a store several workers share, through whichever worker).
   */
  spendLinkCode(nonce: string, expiresAt: Date): Promise<boolean>;

  /** What the page showed of each turn (see `TurnDisplays`). */
  turnDisplays(): TurnDisplays;
  /** Names and archiving (see `ChannelSettings`). */
  channelSettings(): ChannelSettings;
  /** The chat sources' tables: the reply ledger, pairings, grants (see `SourceStore`). */
  sourceStore(): SourceStore;

  close(): Promise<void>;
}
