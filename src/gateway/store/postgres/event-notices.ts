import type { GatewayEvent } from "../../events.js";

/**
 * NOTIFY refuses a payload of 8000 bytes or more; a batch's announcement is kept under this,
 * its frame and ids counted.
 */
const NOTICE_BYTES = 7900;
/** What an id adds to the announcement at most: a bigint's digits and a comma. */
const ID_BYTES = 20;
/** `{"ids":[` `],"items":` `}`. */
const FRAME_BYTES = 19;

/** One event as an append's statement is given it. */
export interface NoticeItem {
  c: string;
  e: GatewayEvent;
}

/**
 * An append's announcement, when its events fit one notification: their ids, and the items
 * as the statement was given them (the same text, so its length is known before it runs).
 */
interface BatchNotice {
  ids: number[];
  items: NoticeItem[];
}

/** One event as a notification announces it: `e` is missing when it is to be read back. */
export interface NoticeEntry {
  id: number;
  c: string;
  e?: GatewayEvent;
}

/** The statement's parameter for `events`: one JSON array of items, oldest first. */
export function noticeItemsJson(events: GatewayEvent[]): string {
  const items = events.map(
    (event) => `{"c":${JSON.stringify(event.channelId)},"e":${JSON.stringify(event)}}`,
  );
  return `[${items.join(",")}]`;
}

/** Whether the announcement of the items in `itemsJson` (of `count` events) fits one NOTIFY. */
export function fitsOneNotice(itemsJson: string, count: number): boolean {
  return Buffer.byteLength(itemsJson) + count * ID_BYTES + FRAME_BYTES < NOTICE_BYTES;
}

/**
 * The events a notification announces, in order: a batch (`{"ids", "items"}`), or one event
 * (`{"id", "c", "e"?}`, as large batches are announced, and workers of earlier versions do).
 * Empty when the text is neither.
 */
export function readNotice(text: string): NoticeEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof parsed !== "object" || parsed === null) return [];
  const batch = parsed as Partial<BatchNotice>;
  if (Array.isArray(batch.ids) && Array.isArray(batch.items)) {
    const { ids, items } = batch as BatchNotice;
    if (ids.length !== items.length) return [];
    return ids.map((id, index) => ({ id, c: items[index]!.c, e: items[index]!.e }));
  }
  const one = parsed as Partial<NoticeEntry>;
  if (typeof one.id !== "number" || typeof one.c !== "string") return [];
  return [one as NoticeEntry];
}
