/**
 * The PostgreSQL store's channels and messages as read: one channel or all, a channel's latest
 * messages, the unanswered and deferred ones, and the two updates of a channel's row (its context
 * and its session). Message writes go through `MessageWrites`, settlement through `settleStatement`.
 */
import type pg from "pg";
import type { ContextUsage } from "../../agents/context-usage.js";
import type { ChannelRecord, MessageRecord } from "../store.js";
import { type ChannelRow, type MessageRow, toChannel, toMessage } from "./postgres-rows.js";
import { preparedQuery } from "./prepared-query.js";

export class PostgresChannels {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async #rows<Row extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<Row[]> {
    return (await this.#pool.query<Row>(preparedQuery(text, values))).rows;
  }

  async list(): Promise<ChannelRecord[]> {
    const rows = await this.#rows<ChannelRow>(
      "SELECT * FROM channels ORDER BY last_activity_at DESC, id",
    );
    return rows.map(toChannel);
  }

  async get(channelId: string): Promise<ChannelRecord | null> {
    const [row] = await this.#rows<ChannelRow>("SELECT * FROM channels WHERE id = $1", [channelId]);
    return row ? toChannel(row) : null;
  }

  async setContext(channelId: string, usage: ContextUsage | null): Promise<void> {
    await this.#rows("UPDATE channels SET context_tokens = $1, context_window = $2 WHERE id = $3", [
      usage?.tokens ?? null,
      usage?.window ?? null,
      channelId,
    ]);
  }

  async setSession(channelId: string, sessionId: string | null): Promise<void> {
    await this.#rows("UPDATE channels SET session_id = $1 WHERE id = $2", [sessionId, channelId]);
  }

  async message(messageId: string): Promise<MessageRecord | null> {
    const [row] = await this.#rows<MessageRow>("SELECT * FROM messages WHERE id = $1", [messageId]);
    return row ? toMessage(row) : null;
  }

  async messages(channelId: string, limit?: number): Promise<MessageRecord[]> {
    const rows = await this.#rows<MessageRow>(
      `SELECT * FROM (SELECT * FROM messages WHERE channel_id = $1 ORDER BY seq DESC LIMIT $2)
         AS latest
       ORDER BY seq`,
      [channelId, limit ?? null],
    );
    return rows.map(toMessage);
  }

  async unanswered(): Promise<MessageRecord[]> {
    const rows = await this.#rows<MessageRow>(
      "SELECT * FROM messages WHERE kind = 'user' AND state IN ('received', 'steered') ORDER BY seq",
    );
    return rows.map(toMessage);
  }

  async deferred(): Promise<MessageRecord[]> {
    const sql = "SELECT * FROM messages WHERE kind = 'user' AND state = 'deferred' ORDER BY seq";
    return (await this.#rows<MessageRow>(sql)).map(toMessage);
  }
}
