import type { MessageState } from "../../events.js";
import type { ChannelRecord, MessageRecord, ScheduleRecord } from "../store.js";

/** The SQLite rows of the gateway's tables and their records (see migrations.ts). */
export interface MessageRow {
  id: string;
  channel_id: string;
  role: MessageRecord["role"];
  kind: MessageRecord["kind"];
  text: string;
  state: MessageState | null;
  reply_to: string | null;
  attempts: number;
  retry_at: string | null;
  source: string;
  created_at: string;
  updated_at: string;
}

export interface ChannelRow {
  id: string;
  session_id: string | null;
  created_at: string;
  last_activity_at: string;
  context_tokens: number | null;
  context_window: number | null;
}

export interface ScheduleRow {
  id: string;
  cron: string;
  channel_id: string;
  prompt: string;
  paused: number;
  consecutive_failures: number;
  last_run_at: string | null;
  next_run_at: string | null;
  last_error: string | null;
  created_at: string;
}

export function toMessage(row: MessageRow): MessageRecord {
  return {
    id: row.id,
    channelId: row.channel_id,
    role: row.role,
    kind: row.kind,
    text: row.text,
    state: row.state,
    replyTo: row.reply_to,
    attempts: row.attempts,
    retryAt: row.retry_at,
    source: row.source,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toChannel(row: ChannelRow): ChannelRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    createdAt: row.created_at,
    lastActivityAt: row.last_activity_at,
    context:
      row.context_tokens === null
        ? null
        : { tokens: row.context_tokens, window: row.context_window },
  };
}

export function toSchedule(row: ScheduleRow): ScheduleRecord {
  return {
    id: row.id,
    cron: row.cron,
    channelId: row.channel_id,
    prompt: row.prompt,
    paused: row.paused !== 0,
    consecutiveFailures: row.consecutive_failures,
    lastRunAt: row.last_run_at,
    nextRunAt: row.next_run_at,
    lastError: row.last_error,
    createdAt: row.created_at,
  };
}
