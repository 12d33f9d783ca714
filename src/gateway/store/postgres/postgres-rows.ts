import type { MessageState } from "../../events.js";
import type { ChannelRecord, MessageRecord, ScheduleRecord } from "../store.js";

/**
 * The PostgreSQL rows of the gateway's tables (see migrations.ts) and their records. node-postgres
 * returns `timestamptz` as a `Date`; records carry ISO strings, as the SQLite adapter's do.
 */
export interface MessageRow {
  id: string;
  channel_id: string;
  role: MessageRecord["role"];
  kind: MessageRecord["kind"];
  text: string;
  state: MessageState | null;
  reply_to: string | null;
  attempts: number;
  retry_at: Date | null;
  source: string;
  created_at: Date;
  updated_at: Date;
}

export interface ChannelRow {
  id: string;
  session_id: string | null;
  created_at: Date;
  last_activity_at: Date;
  context_tokens: number | null;
  context_window: number | null;
}

export interface ScheduleRow {
  id: string;
  cron: string;
  channel_id: string;
  prompt: string;
  paused: boolean;
  consecutive_failures: number;
  last_run_at: Date | null;
  next_run_at: Date | null;
  last_error: string | null;
  created_at: Date;
}

function iso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
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
    retryAt: iso(row.retry_at),
    source: row.source,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toChannel(row: ChannelRow): ChannelRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    createdAt: row.created_at.toISOString(),
    lastActivityAt: row.last_activity_at.toISOString(),
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
    paused: row.paused,
    consecutiveFailures: row.consecutive_failures,
    lastRunAt: iso(row.last_run_at),
    nextRunAt: iso(row.next_run_at),
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
  };
}
