/**
 * What a chat source is given: the settings its user sets, the same on every platform
 * (`ChatSourceSettings`), and what the platform's source adds for the kit (`ChatSourceOptions`).
 */
import type { AttachmentHandler } from "./attachment-intake.js";
import type { Backoff } from "./backoff.js";
import type { ChatPlatform } from "./chat-platform.js";

/**
 * What a chat source's user sets, the same on every platform; each platform's source options
 * extend it with its tokens and addresses and hand it on to the kit whole.
 */
export interface ChatSourceSettings {
  /** Platform user or chat ids let in; empty: pairing mode. */
  allow: readonly string[];
  /** In group chats: only messages that address the bot (default), or every message. */
  groups?: "mention" | "all" | undefined;
  /** After a failed call; default 1 s doubling up to 60 s. */
  backoff?: Backoff | undefined;
  /** One send without an answer this long is tried again; default 30 s. */
  sendTimeoutMs?: number | undefined;
  /** Unsent messages older than this are given up with a line; default 3 hours. */
  freshnessMs?: number | undefined;
  /** The ledger's clock (tests move it on). */
  now?: (() => number) | undefined;
  /** Media handling (see `AttachmentHandler`). */
  attachments?: AttachmentHandler | undefined;
  logger?: ((line: string) => void) | undefined;
}

export interface ChatSourceOptions extends ChatSourceSettings {
  platform: ChatPlatform;
  /** Where a stranger is offered pairing: in any chat (default), or only in direct messages. */
  pairing?: "everywhere" | "direct" | undefined;
  /** How often the ledger is read again for what a dead worker left unsent; default 30 s. */
  rescanMs?: number | undefined;
  /** What to say after "rejected the bot token" (which flag or variable to check). */
  badTokenHint?: string | undefined;
}
