import { randomBytes } from "node:crypto";

/** How long a link's code can be traded for the token. */
export const LINK_CODE_TTL_MS = 10 * 60_000;

/** Codes waiting to be traded at most; issuing more forgets the oldest. */
const MAX_PENDING = 64;

/**
 * Short-lived, single-use codes for the page's link, so that what `rudder serve` prints (and a
 * service log keeps) is no working credential: the page trades the code for the token once,
 * within `ttlMs`; after that, or once traded, the code is useless.
 */
export class LinkCodes {
  /** Code to expiry time, oldest first. */
  readonly #pending = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { ttlMs?: number; now?: () => number } = {}) {
    this.#ttlMs = options.ttlMs ?? LINK_CODE_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  issue(): { code: string; expiresAt: string } {
    this.#forgetExpired();
    const code = randomBytes(18).toString("base64url");
    const expires = this.#now() + this.#ttlMs;
    this.#pending.set(code, expires);
    for (const oldest of this.#pending.keys()) {
      if (this.#pending.size <= MAX_PENDING) break;
      this.#pending.delete(oldest);
    }
    return { code, expiresAt: new Date(expires).toISOString() };
  }

  /** True once for a code issued less than `ttlMs` ago; the code is spent either way. */
  redeem(code: string): boolean {
    const expires = this.#pending.get(code);
    this.#pending.delete(code);
    return expires !== undefined && this.#now() < expires;
  }

  #forgetExpired(): void {
    const now = this.#now();
    for (const [code, expires] of this.#pending) if (expires <= now) this.#pending.delete(code);
  }
}
