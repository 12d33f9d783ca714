import { newMessageId } from "./message-id.js";
import type { MessageRecord } from "./store.js";

/**
 * A new message as its row will hold it, built by the store rather than read back after the
 * insert: a fresh id (or the one the statement was given), `now` for both times, `attempts`, `deliveries` and `retry_at` at their
 * defaults. Both adapters' inserts and settlements return these.
 */
export function newMessage(
  fields: Pick<
    MessageRecord,
    "channelId" | "role" | "kind" | "text" | "state" | "replyTo" | "source" | "answers"
  > & {
    files?: MessageRecord["files"];
    attachments?: readonly NonNullable<MessageRecord["attachments"]>[number][] | undefined;
  },
  now = new Date().toISOString(),
  id = newMessageId(),
): MessageRecord {
  const { answers, files, attachments, ...rest } = fields;
  return {
    id,
    ...rest,
    ...(answers !== undefined && answers.length > 1 ? { answers } : {}),
    ...(files !== undefined && files.length > 0 ? { files } : {}),
    ...(attachments !== undefined && attachments.length > 0
      ? { attachments: [...attachments] }
      : {}),
    attempts: 0,
    deliveries: 0,
    retryAt: null,
    createdAt: now,
    updatedAt: now,
  };
}
