import type Database from "better-sqlite3";
import type { ContextUsage } from "../../agents/context-usage.js";
import type { MessageAttachment, MessageState } from "../../events.js";
import type { ChannelSettings } from "../channel-settings.js";
import { DelegatingStore } from "../delegating-store.js";
import { newMessage } from "../new-message.js";
import { jsonColumn } from "../rows.js";
import type { DeliveryClaim, SourceStore } from "../source-store.js";
import type { ChannelRecord, GatewayStore, MessageRecord, Settlement } from "../store.js";
import { StoreHealth } from "../store-health.js";
import {
  type NewTranscriptChunk,
  SESSION_FILE,
  type StoredTranscriptFile,
  type TranscriptChunk,
  type TranscriptMerge,
} from "../transcript-chunks.js";
import type { TurnDisplays } from "../turn-displays.js";
import { GroupCommit } from "./group-commit.js";
import { openDatabase, PROBE_SQL } from "./open-database.js";
import { sqliteChannelSettings } from "./sqlite-channel-settings.js";
import { healthGuard } from "./sqlite-faults.js";
import { finishDeliveryClaim } from "./sqlite-inbound-deliveries.js";
import { spendLinkCode } from "./sqlite-link-codes.js";
import { type ChannelRow, type MessageRow, toChannel, toMessage } from "./sqlite-rows.js";
import { SqliteSchedules } from "./sqlite-schedules.js";
import { settleRows } from "./sqlite-settle.js";
import { sqliteSourceStore } from "./sqlite-source-store.js";
import { SqliteSpend } from "./sqlite-spend.js";
import { SqliteTranscripts } from "./sqlite-transcripts.js";
import { sqliteTurnDisplays } from "./sqlite-turn-displays.js";

/**
 * The SQLite `GatewayStore`: one file, WAL mode, versioned migrations.
 * better-sqlite3 is synchronous, so every method is atomic by construction;
 * the promises only keep the interface open to a networked database. The writes of one
 * turn of the event loop share a commit (`GroupCommit`); each promise settles once committed.
 * A write that fails for a fault (a full disk, a lock held elsewhere, an I/O error) marks
 * `health` down and rejects with a `StoreUnavailableError`, as the PostgreSQL store does when
 * its database is away; the gateway holds the writes that finish a turn until it is back.
 */
export class SqliteGatewayStore extends DelegatingStore implements GatewayStore {
  readonly #database: Database.Database;
  readonly #transcripts: SqliteTranscripts;
  /** The statements of the per-message path, prepared once (preparing costs more than running). */
  readonly #statements = new Map<string, Database.Statement>();
  readonly #commits: GroupCommit;
  protected readonly schedules: SqliteSchedules;
  protected readonly spend: SqliteSpend;
  /** Whether the file can be written now; down from a fault until a probe write goes through. */
  readonly health: StoreHealth;
  #sources: SourceStore | undefined;

  /** Throws a `StoreUnavailableError` (one line) when `path` cannot be opened and written. */
  constructor(path: string, options: { logger?: (line: string) => void } = {}) {
    super();
    this.#database = openDatabase(path);
    this.health = new StoreHealth({
      name: path,
      probe: () =>
        this.#commits.probe(() => this.#statement(PROBE_SQL).run(new Date().toISOString())),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    this.#transcripts = new SqliteTranscripts(this.#database);
    this.#commits = new GroupCommit(this.#database, healthGuard(this.health));
    this.schedules = new SqliteSchedules(this.#database, this.#commits);
    this.spend = new SqliteSpend((sql) => this.#statement(sql), this.#commits);
  }

  async appendTranscript(chunk: NewTranscriptChunk): Promise<boolean> {
    return this.#commits.write(() => this.#transcripts.append(chunk));
  }

  async replaceTranscript(
    sessionId: string,
    channelId: string,
    bytes: Buffer,
    file = SESSION_FILE,
  ): Promise<boolean> {
    return this.#commits.write(() => this.#transcripts.replace(sessionId, channelId, bytes, file));
  }

  async transcriptChunks(
    sessionId: string,
    after = 0,
    file = SESSION_FILE,
  ): Promise<TranscriptChunk[]> {
    return this.#transcripts.chunks(sessionId, after, file);
  }

  async transcriptLength(sessionId: string, file = SESSION_FILE): Promise<number> {
    return this.#transcripts.length(sessionId, file);
  }

  async transcriptFiles(sessionId: string): Promise<StoredTranscriptFile[]> {
    return this.#transcripts.files(sessionId);
  }

  async compactTranscript(
    sessionId: string,
    channelId: string,
    file = SESSION_FILE,
  ): Promise<TranscriptMerge | undefined> {
    return this.#commits.write(() => this.#transcripts.compact(sessionId, channelId, file));
  }

  async forgetTranscript(sessionId: string): Promise<number> {
    return this.#commits.write(() => this.#transcripts.forget(sessionId));
  }

  async pruneTranscripts(storedBefore: Date): Promise<number> {
    return this.#commits.write(() => this.#transcripts.prune(storedBefore));
  }

  #statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#database.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  async listChannels(): Promise<ChannelRecord[]> {
    const rows = this.#database
      .prepare("SELECT * FROM channels ORDER BY last_activity_at DESC, id")
      .all() as ChannelRow[];
    return rows.map(toChannel);
  }

  async getChannel(channelId: string): Promise<ChannelRecord | null> {
    const row = this.#statement("SELECT * FROM channels WHERE id = ?").get(channelId) as
      | ChannelRow
      | undefined;
    return row ? toChannel(row) : null;
  }

  async setChannelContext(channelId: string, usage: ContextUsage | null): Promise<void> {
    await this.#commits.write(() =>
      this.#statement(
        "UPDATE channels SET context_tokens = ?, context_window = ? WHERE id = ?",
      ).run(usage?.tokens ?? null, usage?.window ?? null, channelId),
    );
  }

  async setChannelSession(channelId: string, sessionId: string | null): Promise<void> {
    await this.#commits.write(() =>
      this.#statement("UPDATE channels SET session_id = ? WHERE id = ?").run(sessionId, channelId),
    );
  }

  async insertUserMessage(
    channelId: string,
    text: string,
    source: string,
    handedTo?: string,
    attachments?: readonly MessageAttachment[],
    claim?: DeliveryClaim,
  ): Promise<MessageRecord> {
    return this.#commits.write(() => {
      const message = this.#insertMessage(
        newMessage({
          channelId,
          role: "user",
          kind: "user",
          text,
          state: "received",
          replyTo: null,
          source,
          attachments,
        }),
        handedTo,
      );
      if (claim) finishDeliveryClaim(this.#database, claim.source, claim.key, message.createdAt);
      return message;
    });
  }

  async insertSystemMessage(
    channelId: string,
    text: string,
    kind: "error" | "compaction" | "reset" = "error",
  ): Promise<MessageRecord> {
    return this.#commits.write(() =>
      this.#insertMessage(
        newMessage({
          channelId,
          role: "system",
          kind,
          text,
          state: null,
          replyTo: null,
          source: "gateway",
        }),
      ),
    );
  }

  async insertAgentMessage(
    channelId: string,
    text: string,
    kind: "reply" | "error",
  ): Promise<MessageRecord> {
    return this.#commits.write(() =>
      this.#insertMessage(
        newMessage({
          channelId,
          role: "assistant",
          kind,
          text,
          state: null,
          replyTo: null,
          source: "agent",
        }),
      ),
    );
  }

  /** Stores `message` in its channel (made if need be); returns it as stored. */
  #insertMessage(message: MessageRecord, handedTo?: string): MessageRecord {
    const insert = this.#database.transaction(() => {
      this.#statement(
        `INSERT INTO channels (id, created_at, last_activity_at) VALUES (?, ?, ?)
           ON CONFLICT(id) DO UPDATE SET last_activity_at = excluded.last_activity_at`,
      ).run(message.channelId, message.createdAt, message.createdAt);
      this.#insertRow(message, handedTo);
    });
    insert();
    return handedTo === undefined ? message : { ...message, deliveries: 1 };
  }

  /**
   * The message's row; its other columns start at their defaults, as `newMessage` has them,
   * but for one delivery by the run `handedTo` when given.
   */
  #insertRow(message: MessageRecord, handedTo?: string): void {
    const { id, channelId, role, kind, text, state, replyTo, source, createdAt } = message;
    this.#statement(
      `INSERT INTO messages (id, channel_id, role, kind, text, state, reply_to, source,
           created_at, updated_at, deliveries, delivered_in, answers, files, attachments)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      channelId,
      role,
      kind,
      text,
      state,
      replyTo,
      source,
      createdAt,
      createdAt,
      handedTo === undefined ? 0 : 1,
      handedTo ?? null,
      ...[message.answers, message.files, message.attachments].map(jsonColumn),
    );
  }

  #getMessageSync(messageId: string): MessageRecord | null {
    const row = this.#statement("SELECT * FROM messages WHERE id = ?").get(messageId) as
      | MessageRow
      | undefined;
    return row ? toMessage(row) : null;
  }

  async getMessage(messageId: string): Promise<MessageRecord | null> {
    return this.#getMessageSync(messageId);
  }

  async listMessages(channelId: string, limit?: number): Promise<MessageRecord[]> {
    const rows = this.#statement(
      `SELECT * FROM (SELECT * FROM messages WHERE channel_id = ? ORDER BY seq DESC LIMIT ?)
         ORDER BY seq`,
    ).all(channelId, limit ?? -1) as MessageRow[];
    return rows.map(toMessage);
  }

  async setMessageState(messageId: string, state: MessageState, run?: string): Promise<void> {
    await this.#commits.write(() =>
      this.#statement(
        `UPDATE messages SET state = ?, updated_at = ?,
           deliveries = deliveries + (? IS NOT NULL AND delivered_in IS NOT ?),
           delivered_in = coalesce(?, delivered_in)
         WHERE id = ? AND (state IS NULL OR state != 'answered')`,
      ).run(state, new Date().toISOString(), run ?? null, run ?? null, run ?? null, messageId),
    );
  }

  /**
   * Committed at once: the agent's next line may be its last (a message that kills the
   * gateway), and nothing waits for this write before reading it.
   */
  async countStarted(messageId: string, run: string): Promise<void> {
    await this.#commits.write(() =>
      this.#statement(
        `UPDATE messages SET attempts = attempts + 1, attempted_in = ?
           WHERE id = ? AND attempted_in IS NOT ? AND (state IS NULL OR state != 'answered')`,
      ).run(run, messageId, run),
    );
  }

  commitPending(): void {
    this.#commits.flush();
  }

  async settle(settlement: Settlement): Promise<MessageRecord | null> {
    if (settlement.messageIds.length === 0) return null;
    const run = this.#database.transaction(() =>
      settleRows(settlement, {
        statement: (sql) => this.#statement(sql),
        insertRow: (message) => this.#insertRow(message),
      }),
    );
    return this.#commits.write(run);
  }

  async listUnanswered(): Promise<MessageRecord[]> {
    const rows = this.#database
      .prepare(
        "SELECT * FROM messages WHERE kind = 'user' AND state IN ('received', 'steered') ORDER BY seq",
      )
      .all() as MessageRow[];
    return rows.map(toMessage);
  }

  async listDeferred(): Promise<MessageRecord[]> {
    const rows = this.#database
      .prepare("SELECT * FROM messages WHERE kind = 'user' AND state = 'deferred' ORDER BY seq")
      .all() as MessageRow[];
    return rows.map(toMessage);
  }

  spendLinkCode(nonce: string, expiresAt: Date): Promise<boolean> {
    return this.#commits.write(() => spendLinkCode(this.#database, nonce, expiresAt));
  }

  channelSettings(): ChannelSettings {
    return sqliteChannelSettings(this.#database, this.#commits);
  }

  turnDisplays(): TurnDisplays {
    return sqliteTurnDisplays(this.#database);
  }

  sourceStore(): SourceStore {
    this.#sources ??= sqliteSourceStore(this.#database, this.#commits, (channelId, text) => {
      const line = newMessage({
        ...{ channelId, role: "system", kind: "error", text, state: null, replyTo: null },
        source: "gateway",
      });
      return this.#insertMessage(line).id;
    });
    return this.#sources;
  }

  async close(): Promise<void> {
    this.health.close();
    this.#commits.flush();
    if (this.#database.open) this.#database.close();
  }
}
