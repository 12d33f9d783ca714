import type { PairingBook, PairingRequest } from "../../gateway/source-store.js";
import type { IncomingChat } from "./chat-platform.js";
import { pairingText } from "./kit-texts.js";

/** A pairing code is good this long. */
export const PAIRING_TTL_MS = 60 * 60_000;
/** Codes waiting at most per source; strangers past it are told to come back later. */
export const MAX_PENDING_PAIRINGS = 3;
/** Strangers answered at most once per code, remembered up to this many. */
const REMEMBERED_STRANGERS = 10_000;

/**
 * Who may talk to a source's agents: the ids of its allow-list (a user, or a whole chat) and
 * the people the owner approved by pairing code (stored, so they stay in). A stranger gets a
 * short one-time code, once per code; the owner approves it on the page, with `rudder pairing
 * approve`, or with `/pair CODE` from an allowed chat. With an empty allow-list and nobody
 * paired, the source is in pairing mode: the first person in is the one the owner approves.
 */
export class ChatAccess {
  readonly #source: string;
  readonly #allow: ReadonlySet<string>;
  readonly #book: PairingBook;
  readonly #approved = new Set<string>();
  readonly #answered = new Set<string>();

  constructor(source: string, allow: readonly string[], book: PairingBook) {
    this.#source = source;
    this.#allow = new Set(allow);
    this.#book = book;
  }

  get pairingMode(): boolean {
    return this.#allow.size === 0 && this.#approved.size === 0;
  }

  async load(): Promise<void> {
    for (const userId of await this.#book.approved(this.#source)) this.#approved.add(userId);
  }

  /** Allowed now; a stranger is looked up again (approved on the page or the CLI since). */
  async allowed(chatId: string, userId: string | undefined): Promise<boolean> {
    if (this.#allow.has(chatId)) return true;
    if (userId === undefined) return false;
    if (this.#allow.has(userId) || this.#approved.has(userId)) return true;
    await this.load().catch(() => undefined);
    return this.#approved.has(userId);
  }

  /** What to tell a stranger (a code), or null when they were told it already. */
  async stranger(message: IncomingChat): Promise<string | null> {
    if (message.userId === undefined) return null;
    const request = await this.#book.request(
      {
        source: this.#source,
        userId: message.userId,
        chatId: message.chatId,
        name: message.userName,
      },
      PAIRING_TTL_MS,
      MAX_PENDING_PAIRINGS,
    );
    const key = `${message.chatId}/${message.userId}/${request?.code ?? ""}`;
    if (this.#answered.has(key)) return null;
    if (this.#answered.size >= REMEMBERED_STRANGERS) this.#answered.clear();
    this.#answered.add(key);
    return pairingText(this.#source, message.userId, message.chatId, request?.code ?? null);
  }

  async approve(code: string, by: string): Promise<PairingRequest | null> {
    const request = await this.#book.approve(this.#source, code, by);
    if (request) this.#approved.add(request.userId);
    return request;
  }
}
