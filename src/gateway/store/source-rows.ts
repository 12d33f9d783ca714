/**
 * The rows of the chat sources' tables (`outbound`, `pairings`, `channel_grants`) as both
 * adapters read them, and the records they become: times as ISO strings whatever the driver
 * gives (SQLite text, node-postgres `Date`), flags as booleans.
 */
import { randomInt } from "node:crypto";
import type { SentFile } from "../events.js";
import type {
  ChannelGrant,
  NewOutbound,
  OutboundEntry,
  OutboundKind,
  OutboundState,
  PairingRequest,
  UnrecordedMessage,
} from "./source-store.js";

type Time = string | Date;

export interface OutboundRow {
  id: string;
  source: string;
  channel_id: string;
  kind: string;
  action: string;
  target: string | null;
  origin: string | null;
  body: string;
  state: string;
  platform_id: string | null;
  may_repeat: number | boolean;
  attempts: number;
  next_at: Time;
  created_at: Time;
  updated_at: Time;
}

export interface PairingRow {
  source: string;
  code: string;
  user_id: string;
  chat_id: string;
  name: string;
  created_at: Time;
  expires_at: Time;
  approved_at: Time | null;
  approved_by: string | null;
}

export interface GrantRow {
  channel_id: string;
  tool_name: string;
  command: string;
  granted_by: string;
  created_at: Time;
}

export function iso(value: Time): string {
  return typeof value === "string" ? value : value.toISOString();
}

/**
 * A new entry's values in the order of the `outbound` columns both adapters insert them into
 * (`source, channel_id, kind, action, target, origin, body`), after its `id`.
 */
export function outboundValues(entry: NewOutbound): (string | null)[] {
  return [
    entry.source,
    entry.channelId,
    entry.kind,
    entry.action,
    entry.target ?? null,
    entry.origin ?? null,
    entry.body,
  ];
}

export function toOutbound(row: OutboundRow): OutboundEntry {
  return {
    id: row.id,
    source: row.source,
    channelId: row.channel_id,
    kind: row.kind as OutboundKind,
    action: row.action === "edit" ? "edit" : "send",
    target: row.target,
    origin: row.origin,
    body: row.body,
    state: row.state as OutboundState,
    platformId: row.platform_id,
    mayRepeat: row.may_repeat === true || row.may_repeat === 1,
    attempts: row.attempts,
    nextAt: iso(row.next_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function toPairing(row: PairingRow): PairingRequest {
  return {
    source: row.source,
    code: row.code,
    userId: row.user_id,
    chatId: row.chat_id,
    name: row.name,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    approvedAt: row.approved_at === null ? null : iso(row.approved_at),
    approvedBy: row.approved_by,
  };
}

export function toGrant(row: GrantRow): ChannelGrant {
  return {
    channelId: row.channel_id,
    toolName: row.tool_name,
    command: row.command === "" ? null : row.command,
    grantedBy: row.granted_by,
    createdAt: iso(row.created_at),
  };
}

/** Letters and digits nobody misreads (no 0/O, 1/I/L): eight of them are about 40 bits. */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/** A pairing code as people read it aloud: eight characters of `CODE_ALPHABET`. */
export function pairingCode(): string {
  let code = "";
  for (let index = 0; index < 8; index++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** The message kinds a chat is sent (replies and dividers), as the ledger's `unrecorded` reads. */
export const CHAT_MESSAGE_KINDS = ["reply", "fallback", "error", "compaction", "reset"];

/**
 * The stored `source` of a message a chat source delivered to `channelId`, as SQL matches it:
 * the source's name (the channel id's prefix) alone, or followed by the sender (`discord:7:Ada`).
 */
export function chatSourceOf(channelId: string): [string, string] {
  const name = channelId.slice(0, Math.max(channelId.indexOf(":"), 0));
  return [name, `${name}:%`];
}

/** A row the ledger's `unrecorded` reads, as both adapters select it. */
export interface UnrecordedRow {
  id: string;
  kind: string;
  text: string;
  createdAt: Time;
  files: string | null;
}

export function toUnrecorded(row: UnrecordedRow): UnrecordedMessage {
  const message: UnrecordedMessage = {
    id: row.id,
    kind: row.kind,
    text: row.text,
    createdAt: iso(row.createdAt),
  };
  if (row.files !== null) message.files = JSON.parse(row.files) as SentFile[];
  return message;
}
