import pg from "pg";
import type { ContextUsage } from "../../agents/context-usage.js";
import type { GatewayEvent, MessageAttachment, MessageState } from "../../events.js";
import { DelegatingStore } from "../delegating-store.js";
import type { SharedEvent, SharedStore, WorkerLeases } from "../shared-store.js";
import type { DeliveryClaim } from "../source-store.js";
import type { ChannelRecord, MessageRecord, Settlement } from "../store.js";
import { StoreHealth } from "../store-health.js";
import { redactedUrl } from "../store-location.js";
import { StoreUnavailableError } from "../store-unavailable-error.js";
import {
  type NewTranscriptChunk,
  SESSION_FILE,
  type StoredTranscriptFile,
  type TranscriptChunk,
  type TranscriptMerge,
} from "../transcript-chunks.js";
import { ChannelLeases } from "./channel-leases.js";
import { EventLog } from "./event-log.js";
import { MessageWrites } from "./message-writes.js";
import { migrate } from "./migrations.js";
import { NotifyListener } from "./notify-listener.js";
import { PermissionLedger } from "./permission-ledger.js";
import { postgresChannelSettings } from "./postgres-channel-settings.js";
import { PostgresChannels } from "./postgres-channels.js";
import { PostgresSchedules } from "./postgres-schedules.js";
import { settleStatement } from "./postgres-settle.js";
import { postgresSourceStore } from "./postgres-source-store.js";
import { PostgresSpend } from "./postgres-spend.js";
import { PostgresTranscripts } from "./postgres-transcripts.js";
import { postgresTurnDisplays } from "./postgres-turn-displays.js";
import { announceSchedule, listenForSchedules } from "./schedule-changes.js";
import { sharedToken } from "./shared-token.js";
import { spendLinkCode } from "./spent-link-codes.js";
import { listenForWakeUps, wakeNotification } from "./wake-ups.js";
import { watchPool } from "./watched-pool.js";
import { WriteBatch } from "./write-batch.js";

export interface PostgresStoreOptions {
  /** Connections kept at most; default 10. */
  maxConnections?: number;
  /** How long a connection attempt may take; default 5000. */
  connectTimeoutMs?: number;
  /** How long a statement may wait for its answer; default 15000. */
  queryTimeoutMs?: number;
  /** Where the database being lost and back is reported (one line each, see `StoreHealth`). */
  logger?: (line: string) => void;
}

/**
 * The PostgreSQL `GatewayStore`, through a node-postgres pool: the store that several gateway
 * workers share. Each method is one statement or one transaction, so it is atomic on its own
 * as the interface asks; `settle` locks the messages it answers (`FOR UPDATE`), so two workers
 * settling the same message answer it once.
 */
export class PostgresGatewayStore extends DelegatingStore implements SharedStore {
  readonly #pool: pg.Pool;
  readonly #events: EventLog;
  readonly #writes: MessageWrites;
  readonly #transcripts: PostgresTranscripts;
  protected readonly schedules: PostgresSchedules;
  readonly #channels: PostgresChannels;
  protected readonly spend: PostgresSpend;
  /** The worker's one LISTEN connection, for all its NOTIFY channels. */
  readonly #notices: NotifyListener;
  readonly #logger: (line: string) => void;
  /** Whether the database can be reached now; every statement reports to it. */
  readonly health: StoreHealth;
  #closed: Promise<void> | undefined;
  #worker: string | undefined;

  private constructor(pool: pg.Pool, url: string, logger: (line: string) => void) {
    super();
    this.#pool = pool;
    const batch = new WriteBatch(pool);
    this.#events = new EventLog(pool, batch);
    this.#writes = new MessageWrites(batch);
    this.#transcripts = new PostgresTranscripts(pool, () => this.#worker);
    this.schedules = new PostgresSchedules(pool);
    this.#channels = new PostgresChannels(pool);
    this.spend = new PostgresSpend(pool);
    this.health = new StoreHealth({
      name: redactedUrl(url),
      probe: () => pool.query("SELECT 1"),
      logger,
    });
    this.#notices = new NotifyListener(url, logger, this.health);
    this.#logger = logger;
    watchPool(pool, this.health);
    // A dropped idle connection must not crash the process; the health finds out what it was.
    pool.on("error", () => void this.health.check());
  }

  /** Connects, migrates, and returns the store; `StoreUnavailableError` when it cannot. */
  static async open(
    url: string,
    options: PostgresStoreOptions = {},
  ): Promise<PostgresGatewayStore> {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      query_timeout: options.queryTimeoutMs ?? 15_000,
      keepAlive: true,
    });
    // Until the store watches it (once migrated), an idle connection's failure is the open's.
    const beforeWatched = () => {};
    pool.on("error", beforeWatched);
    try {
      const client = await pool.connect();
      try {
        await migrate(client);
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => {});
      const reason = error instanceof Error ? error.message : String(error);
      throw new StoreUnavailableError(
        `cannot use the database ${redactedUrl(url)}: ${reason || String(error)}`,
        { cause: error },
      );
    }
    pool.off("error", beforeWatched);
    return new PostgresGatewayStore(pool, url, options.logger ?? (() => {}));
  }

  fence(worker: string): void {
    this.#worker = worker;
  }

  channelLeases(worker: string, seconds: number): WorkerLeases {
    return new ChannelLeases(this.#pool, worker, seconds);
  }

  claimFiring(
    scheduleId: string,
    dueAt: string,
    nextRunAt: string | null,
    now: Date,
  ): Promise<boolean> {
    return this.schedules.claimFiring(scheduleId, dueAt, nextRunAt, now);
  }

  async wake(owner: string, messageId: string): Promise<void> {
    const [text, values] = wakeNotification(owner, messageId);
    await this.#pool.query(text, values);
  }

  listenForWakeUps(
    worker: string,
    onWake: (messageId: string) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }> {
    return listenForWakeUps(this.#notices, worker, onWake, onReconnect);
  }

  async appendEvent(event: GatewayEvent): Promise<number> {
    const [id] = await this.#events.append([event]);
    return id!;
  }

  appendEvents(events: GatewayEvent[]): Promise<number[]> {
    return this.#events.append(events);
  }

  eventsAfter(channelId: string, after: number | undefined, limit: number): Promise<SharedEvent[]> {
    return this.#events.after(channelId, after, limit);
  }

  eventStreamName(): Promise<string> {
    return this.#events.streamName();
  }

  eventsSince(after: number, limit: number): Promise<SharedEvent[]> {
    return this.#events.since(after, limit);
  }

  listenForEvents(
    onEvent: (event: SharedEvent) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }> {
    return this.#events.listen(this.#notices, onEvent, onReconnect, this.#logger);
  }

  permissionLedger(): PermissionLedger {
    return new PermissionLedger(this.#pool, this.#notices);
  }

  spendLinkCode(nonce: string, expiresAt: Date): Promise<boolean> {
    return spendLinkCode(this.#pool, nonce, expiresAt);
  }

  turnDisplays = () => postgresTurnDisplays(this.#pool);
  channelSettings = () => postgresChannelSettings(this.#pool);
  sourceStore() {
    return postgresSourceStore(this.#pool, this.insertSystemMessage.bind(this));
  }

  announceSchedule(scheduleId: string): Promise<void> {
    return announceSchedule(this.#pool, scheduleId);
  }

  listenForSchedules(
    onChange: (scheduleId: string) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }> {
    return listenForSchedules(this.#notices, onChange, onReconnect);
  }

  appendTranscript(chunk: NewTranscriptChunk): Promise<boolean> {
    return this.#transcripts.append(chunk);
  }

  replaceTranscript(
    sessionId: string,
    channelId: string,
    bytes: Buffer,
    file = SESSION_FILE,
  ): Promise<boolean> {
    return this.#transcripts.replace(sessionId, channelId, bytes, file);
  }

  transcriptChunks(sessionId: string, after = 0, file = SESSION_FILE): Promise<TranscriptChunk[]> {
    return this.#transcripts.chunks(sessionId, after, file);
  }

  transcriptLength(sessionId: string, file = SESSION_FILE): Promise<number> {
    return this.#transcripts.length(sessionId, file);
  }

  transcriptFiles(sessionId: string): Promise<StoredTranscriptFile[]> {
    return this.#transcripts.files(sessionId);
  }

  compactTranscript(
    sessionId: string,
    channelId: string,
    file = SESSION_FILE,
  ): Promise<TranscriptMerge | undefined> {
    return this.#transcripts.compact(sessionId, channelId, file);
  }

  forgetTranscript(sessionId: string): Promise<number> {
    return this.#transcripts.forget(sessionId);
  }

  pruneTranscripts(storedBefore: Date): Promise<number> {
    return this.#transcripts.prune(storedBefore);
  }

  /** Deletes stored events older than `hours` (also done every so many appends). */
  pruneEvents(hours?: number): Promise<number> {
    return this.#events.prune(hours);
  }

  sharedToken(candidate: string): Promise<string> {
    return sharedToken(this.#pool, candidate);
  }

  listChannels(): Promise<ChannelRecord[]> {
    return this.#channels.list();
  }

  getChannel(channelId: string): Promise<ChannelRecord | null> {
    return this.#channels.get(channelId);
  }

  setChannelContext(channelId: string, usage: ContextUsage | null): Promise<void> {
    return this.#channels.setContext(channelId, usage);
  }

  setChannelSession(channelId: string, sessionId: string | null): Promise<void> {
    return this.#channels.setSession(channelId, sessionId);
  }

  async insertUserMessage(
    channelId: string,
    text: string,
    source: string,
    handedTo?: string,
    attachments?: readonly MessageAttachment[],
    claim?: DeliveryClaim,
  ): Promise<MessageRecord> {
    return this.#writes.insert(
      channelId,
      "user",
      "user",
      text,
      "received",
      source,
      handedTo,
      attachments,
      claim,
    );
  }

  async insertSystemMessage(
    channelId: string,
    text: string,
    kind: "error" | "compaction" | "reset" = "error",
  ): Promise<MessageRecord> {
    return this.#writes.insert(channelId, "system", kind, text, null, "gateway");
  }

  async insertAgentMessage(
    channelId: string,
    text: string,
    kind: "reply" | "error",
  ): Promise<MessageRecord> {
    return this.#writes.insert(channelId, "assistant", kind, text, null, "agent");
  }

  getMessage(messageId: string): Promise<MessageRecord | null> {
    return this.#channels.message(messageId);
  }

  listMessages(channelId: string, limit?: number): Promise<MessageRecord[]> {
    return this.#channels.messages(channelId, limit);
  }

  /** Batched with other messages' (see `MessageWrites`). */
  setMessageState(messageId: string, state: MessageState, run?: string): Promise<void> {
    return this.#writes.setState(messageId, state, run);
  }

  /** Batched with other messages' (see `MessageWrites`). */
  countStarted(messageId: string, run: string): Promise<void> {
    return this.#writes.countStarted(messageId, run);
  }

  /** One statement: see `settleStatement`. */
  settle(settlement: Settlement): Promise<MessageRecord | null> {
    return settleStatement(this.#pool, this.#worker ?? null, settlement);
  }

  listUnanswered(): Promise<MessageRecord[]> {
    return this.#channels.unanswered();
  }

  listDeferred(): Promise<MessageRecord[]> {
    return this.#channels.deferred();
  }

  async close(): Promise<void> {
    this.health.close();
    this.#closed ??= Promise.all([this.#notices.close(), this.#pool.end()]).then(() => {});
    await this.#closed;
  }
}
