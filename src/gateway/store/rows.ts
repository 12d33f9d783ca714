import type { MessageAttachment, MessageState, SentFile } from "../events.js";
import type { ChannelRecord, MessageRecord, ScheduleRecord } from "./store.js";

/**
 * The rows of the gateway's tables, as every adapter's migrations define them, and their
 * records. Adapters differ only in how a time (`Time`) and a flag (`Flag`) come back from their
 * driver: SQLite gives ISO strings and 0/1, node-postgres `Date`s and booleans.
 */
export interface MessageRow<Time> {
  id: string;
  channel_id: string;
  role: MessageRecord["role"];
  kind: MessageRecord["kind"];
  text: string;
  state: MessageState | null;
  reply_to: string | null;
  /** JSON: every message a reply answers, when it answers more than one. */
  answers: string | null;
  /** JSON: the files the agent sent with a reply (`SentFile[]`), when it sent any. */
  files?: string | null;
  /** JSON: the files that came with a user message (`MessageAttachment[]`), when any did. */
  attachments?: string | null;
  attempts: number;
  deliveries: number;
  retry_at: Time | null;
  source: string;
  created_at: Time;
  updated_at: Time;
}

/** A JSON column's value: the value as JSON, or null when there is none. */
export function jsonColumn(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

export interface ChannelRow<Time> {
  id: string;
  session_id: string | null;
  created_at: Time;
  last_activity_at: Time;
  context_tokens: number | null;
  context_window: number | null;
  title: string | null;
  chat_title: string | null;
  archived_at: Time | null;
}

export interface ScheduleRow<Time, Flag> {
  id: string;
  cron: string;
  channel_id: string;
  prompt: string;
  paused: Flag;
  consecutive_failures: number;
  last_run_at: Time | null;
  next_run_at: Time | null;
  last_error: string | null;
  created_at: Time;
}

export interface RowMapping<Time, Flag> {
  toMessage(row: MessageRow<Time>): MessageRecord;
  toChannel(row: ChannelRow<Time>): ChannelRecord;
  toSchedule(row: ScheduleRow<Time, Flag>): ScheduleRecord;
}

/**
 * A channel archived is listed so until a message is stored in it after it was archived (a
 * person's, a schedule's, an answer): then it is back in the list, as a chat app brings back an
 * archived chat that gets a new message. Read from the times, so storing a message costs no
 * write more.
 */
function stillArchived(archivedAt: string | null, lastActivityAt: string): string | null {
  return archivedAt !== null && Date.parse(lastActivityAt) > Date.parse(archivedAt)
    ? null
    : archivedAt;
}

/** The three mappers of an adapter whose driver gives times as `Time` and flags as `Flag`. */
export function rowMapping<Time, Flag>(
  time: (value: Time) => string,
  flag: (value: Flag) => boolean,
): RowMapping<Time, Flag> {
  const optional = (value: Time | null) => (value === null ? null : time(value));
  return {
    toMessage: (row) => ({
      id: row.id,
      channelId: row.channel_id,
      role: row.role,
      kind: row.kind,
      text: row.text,
      state: row.state,
      replyTo: row.reply_to,
      ...(row.answers === null || row.answers === undefined
        ? {}
        : { answers: JSON.parse(row.answers) as string[] }),
      ...(row.files === null || row.files === undefined
        ? {}
        : { files: JSON.parse(row.files) as SentFile[] }),
      ...(row.attachments === null || row.attachments === undefined
        ? {}
        : { attachments: JSON.parse(row.attachments) as MessageAttachment[] }),
      attempts: row.attempts,
      deliveries: row.deliveries,
      retryAt: optional(row.retry_at),
      source: row.source,
      createdAt: time(row.created_at),
      updatedAt: time(row.updated_at),
    }),
    toChannel: (row) => ({
      id: row.id,
      sessionId: row.session_id,
      createdAt: time(row.created_at),
      lastActivityAt: time(row.last_activity_at),
      context:
        row.context_tokens === null
          ? null
          : { tokens: row.context_tokens, window: row.context_window },
      title: row.title ?? null,
      chatTitle: row.chat_title ?? null,
      archivedAt: stillArchived(optional(row.archived_at ?? null), time(row.last_activity_at)),
    }),
    toSchedule: (row) => ({
      id: row.id,
      cron: row.cron,
      channelId: row.channel_id,
      prompt: row.prompt,
      paused: flag(row.paused),
      consecutiveFailures: row.consecutive_failures,
      lastRunAt: optional(row.last_run_at),
      nextRunAt: optional(row.next_run_at),
      lastError: row.last_error,
      createdAt: time(row.created_at),
    }),
  };
}

/** What `updateSchedule` may change. */
export type ScheduleChange = Partial<
  Pick<ScheduleRecord, "paused" | "consecutiveFailures" | "lastRunAt" | "nextRunAt" | "lastError">
>;

/** The schedule fields `updateSchedule` may change, and their columns (the same in every adapter). */
export const scheduleColumns = {
  paused: "paused",
  consecutiveFailures: "consecutive_failures",
  lastRunAt: "last_run_at",
  nextRunAt: "next_run_at",
  lastError: "last_error",
} as const;
