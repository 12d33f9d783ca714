import type Database from "better-sqlite3";
import { newMessage } from "../new-message.js";
import { jsonColumn } from "../rows.js";
import type { MessageRecord, Settlement } from "../store.js";

/** What a settlement needs of the store: its prepared statements, and how a message row is written. */
export interface SettleRows {
  statement(sql: string): Database.Statement;
  insertRow(message: MessageRecord): void;
}

/**
 * A settlement's rows, inside the caller's transaction: every message of it still open moved to
 * its state, the reply (linked to each of them), the channel's activity (and context usage,
 * when given), the turn and what the page showed of it. Returns the reply, or null when every message was answered already.
 */
export function settleRows(settlement: Settlement, rows: SettleRows): MessageRecord | null {
  const { messageIds, state, reply, turn } = settlement;
  const now = new Date().toISOString();
  // Each open one updated, and found so: its channel and whether it was still open.
  const update = rows.statement(
    `UPDATE messages SET state = ?, retry_at = ?, updated_at = ?
       WHERE id = ? AND (state IS NULL OR state != 'answered') RETURNING channel_id`,
  );
  let firstOpen: { id: string; channelId: string } | undefined;
  const answers: string[] = [];
  for (const id of messageIds) {
    const row = update.get(state, settlement.retryAt ?? null, now, id) as
      | { channel_id: string }
      | undefined;
    if (row === undefined) continue;
    firstOpen ??= { id, channelId: row.channel_id };
    answers.push(id);
  }
  if (firstOpen === undefined) return null;
  const answer = newMessage(
    {
      channelId: firstOpen.channelId,
      role: "assistant",
      kind: reply.kind,
      text: reply.text,
      state: null,
      replyTo: firstOpen.id,
      source: "gateway",
      answers,
      files: settlement.files,
    },
    now,
  );
  rows.insertRow(answer);
  if (settlement.display !== undefined) {
    rows
      .statement(
        `INSERT OR IGNORE INTO turn_displays (message_id, channel_id, display, created_at)
           VALUES (?, ?, ?, ?)`,
      )
      .run(answer.id, firstOpen.channelId, settlement.display, now);
  }
  const { context } = settlement;
  if (context === undefined) {
    rows
      .statement("UPDATE channels SET last_activity_at = ? WHERE id = ?")
      .run(now, firstOpen.channelId);
  } else {
    rows
      .statement(
        `UPDATE channels SET last_activity_at = ?, context_tokens = ?, context_window = ?
           WHERE id = ?`,
      )
      .run(now, context?.tokens ?? null, context?.window ?? null, firstOpen.channelId);
  }
  if (turn) {
    rows
      .statement(
        `INSERT OR REPLACE INTO turns (message_id, result, cost_usd, usage_json, duration_ms,
             num_turns, is_error, subtype, session_id, created_at, channel_id, binding,
             input_tokens, output_tokens)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        firstOpen.id,
        turn.result,
        turn.costUsd,
        jsonColumn(turn.usage),
        turn.durationMs,
        turn.numTurns,
        turn.isError ? 1 : 0,
        turn.subtype,
        turn.sessionId,
        now,
        firstOpen.channelId,
        turn.binding ?? null,
        turn.inputTokens ?? null,
        turn.outputTokens ?? null,
      );
  }
  return answer;
}
