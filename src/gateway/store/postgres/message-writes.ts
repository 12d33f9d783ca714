import type { MessageAttachment, MessageState } from "../../events.js";
import { newMessage } from "../new-message.js";
import { jsonColumn } from "../rows.js";
import type { DeliveryClaim } from "../source-store.js";
import type { MessageRecord } from "../store.js";
import type { InsertItem, WriteBatch } from "./write-batch.js";

/**
 * The PostgreSQL store's writes of single messages, from every channel, batched with the
 * worker's other writes (`WriteBatch`): new messages, each channel's row made or touched first
 * in the order of their ids (so two workers' batches over the same channels lock their rows in
 * the same order, and never wait on each other in a circle), and delivery marks and started
 * counts. The records are built here, not read back (`RETURNING *` costs a worker the parsing of
 * every column of every row).
 */
export class MessageWrites {
  readonly #batch: WriteBatch;

  constructor(batch: WriteBatch) {
    this.#batch = batch;
  }

  async insert(
    channelId: string,
    role: MessageRecord["role"],
    kind: MessageRecord["kind"],
    text: string,
    state: MessageState | null,
    source: string,
    /** The run that hands it to an agent at once: counted as its delivery in the insert. */
    handedTo?: string,
    attachments?: readonly MessageAttachment[],
    /** A chat message's delivery claim, finished in the same statement. */
    claim?: DeliveryClaim,
  ): Promise<MessageRecord> {
    const record = newMessage({
      channelId,
      role,
      kind,
      text,
      state,
      replyTo: null,
      source,
      attachments,
    });
    const item = insertItem(record, handedTo);
    if (claim) Object.assign(item, { q: claim.source, g: claim.key });
    await this.#batch.add({ kind: "insert", item });
    return handedTo === undefined ? record : { ...record, deliveries: 1 };
  }

  /** The message's state; with `run`, counted as delivered to that gateway run (once a run). */
  async setState(messageId: string, state: MessageState, run?: string): Promise<void> {
    await this.#batch.add({ kind: "update", item: { i: messageId, s: state, r: run ?? null } });
  }

  /** The message counted as started on by an agent of `run` (once a run). */
  async countStarted(messageId: string, run: string): Promise<void> {
    await this.#batch.add({ kind: "update", item: { i: messageId, s: null, r: run } });
  }
}

function insertItem(record: MessageRecord, handedTo: string | undefined): InsertItem {
  return {
    i: record.id,
    c: record.channelId,
    r: record.role,
    k: record.kind,
    t: record.text,
    s: record.state,
    o: record.source,
    a: record.createdAt,
    d: handedTo ?? null,
    f: jsonColumn(record.attachments),
  };
}
