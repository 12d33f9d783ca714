import type { PairingBook, PairingRequest } from "../../gateway/store/source-store.js";
import type { IncomingChat } from "./chat-platform.js";
import { pairingText } from "./kit-texts.js";

/** A pairing code is good this long. */
export const PAIRING_TTL_MS = 60 * 60_000;
/** Codes waiting at most per source; strangers past it are told to come back later. */
export const MAX_PENDING_PAIRINGS = 3;
/** Strangers answered at most once per code, remembered up to this many. */
const REMEMBERED_STRANGERS = 10_000;

/** Who wrote (or pressed a button), as far as access goes. */
export interface Speaker {
  channelId: string;
  chatId: string;
  userId: string | undefined;
  /** The sender's roles (Discord), matched by `role:<id>` entries. */
  roles?: readonly string[] | undefined;
}

/**
 * The allow-list of the binding a channel uses (`allow` in the gateway's configuration file),
 * or undefined when its binding sets none and the source's own list applies.
 */
export type BindingAllow = (channelId: string) => readonly string[] | undefined;

/**
 * Who may talk to a source's agents: the ids of its allow-list (a user, or a whole chat) and
 * the people the owner approved by pairing code (stored, so they stay in). A stranger gets a
 * short one-time code, once per code; the owner approves it on the page, with `rudder pairing
 * approve`, or with `/pair CODE` from an allowed chat. With an empty allow-list and nobody
 * paired, the source is in pairing mode: the first person in is the one the owner approves.
 *
 * A channel whose binding carries its own `allow` is governed by that list alone (user ids,
 * chat or channel ids, `role:<id>` for a sender's role), in place of the source's: a person
 * paired is let in there only in the very chat their code was approved for (their direct
 * chat), and a stranger in a group there is ignored rather than offered a code.
 */
export class ChatAccess {
  readonly #source: string;
  readonly #allow: ReadonlySet<string>;
  readonly #book: PairingBook;
  readonly #bindingAllow: BindingAllow;
  /** The chats each paired user was approved in. */
  readonly #approved = new Map<string, Set<string>>();
  readonly #answered = new Set<string>();

  constructor(
    source: string,
    allow: readonly string[],
    book: PairingBook,
    bindingAllow: BindingAllow = () => undefined,
  ) {
    this.#source = source;
    this.#allow = new Set(allow);
    this.#book = book;
    this.#bindingAllow = bindingAllow;
  }

  get pairingMode(): boolean {
    return this.#allow.size === 0 && this.#approved.size === 0;
  }

  async load(): Promise<void> {
    for (const request of await this.#book.list(this.#source)) {
      if (request.approvedAt === null) continue;
      const chats = this.#approved.get(request.userId) ?? new Set<string>();
      chats.add(request.chatId);
      this.#approved.set(request.userId, chats);
    }
  }

  /** Allowed now; a stranger is looked up again (approved on the page or the CLI since). */
  async allowed(speaker: Speaker): Promise<boolean> {
    if (this.#known(speaker)) return true;
    if (speaker.userId === undefined) return false;
    await this.load().catch(() => undefined);
    return this.#known(speaker);
  }

  #known({ channelId, chatId, userId, roles }: Speaker): boolean {
    const bound = this.#bindingAllow(channelId);
    if (bound !== undefined) {
      if (bound.includes(chatId)) return true;
      if (userId === undefined) return false;
      if (bound.includes(userId)) return true;
      if (roles?.some((role) => bound.includes(`role:${role}`))) return true;
      return this.#approved.get(userId)?.has(chatId) ?? false;
    }
    if (this.#allow.has(chatId)) return true;
    if (userId === undefined) return false;
    if (roles?.some((role) => this.#allow.has(`role:${role}`))) return true;
    return this.#allow.has(userId) || this.#approved.has(userId);
  }

  /** What to tell a stranger (a code), or null when they were told it already or are ignored. */
  async stranger(message: IncomingChat): Promise<string | null> {
    if (message.userId === undefined) return null;
    // A pairing lets a person in only in their own chat where a binding names who may talk.
    if (message.group && this.#bindingAllow(message.channelId) !== undefined) return null;
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
    if (request) {
      const chats = this.#approved.get(request.userId) ?? new Set<string>();
      chats.add(request.chatId);
      this.#approved.set(request.userId, chats);
    }
    return request;
  }
}
