import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** How long a link's code can be traded for the token. */
export const LINK_CODE_TTL_MS = 10 * 60_000;

/** Spent codes remembered in memory at most (each only until it expires). */
const MAX_SPENT = 10_000;

/**
 * Marks the code `nonce` as traded: true the first time, false after. With several workers on
 * one database this is the store's (`SharedStore.spendLinkCode`), so a code is traded once
 * through whichever worker.
 */
export type SpendLinkCode = (nonce: string, expiresAt: Date) => Promise<boolean>;

/**
 * Short-lived, single-use codes for the page's link, so that what `rudder serve` prints (and a
 * service log keeps) is no working credential: the page trades the code for the token once,
 * within `ttlMs`; after that, or once traded, the code is useless.
 *
 * A code carries its own expiry and a random nonce, signed with the gateway's token (an HMAC),
 * so any worker that knows the token can check one another worker printed; only which codes
 * were already traded is kept (`spend`).
 */
export class LinkCodes {
  readonly #key: Buffer;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #spend: SpendLinkCode;

  constructor(
    secret: string,
    options: { ttlMs?: number; now?: () => number; spend?: SpendLinkCode } = {},
  ) {
    this.#key = createHmac("sha256", "rudder link codes").update(secret).digest();
    this.#ttlMs = options.ttlMs ?? LINK_CODE_TTL_MS;
    this.#now = options.now ?? Date.now;
    this.#spend = options.spend ?? spentInMemory(this.#now);
  }

  issue(): { code: string; expiresAt: string } {
    const expires = this.#now() + this.#ttlMs;
    const payload = `${expires.toString(36)}.${randomBytes(12).toString("base64url")}`;
    return {
      code: `${payload}.${this.#sign(payload)}`,
      expiresAt: new Date(expires).toISOString(),
    };
  }

  /** True once for a code issued less than `ttlMs` ago; never for a forged or altered one. */
  async redeem(code: string): Promise<boolean> {
    const [expiry, nonce, signature, ...rest] = code.split(".");
    if (expiry === undefined || nonce === undefined || signature === undefined || rest.length > 0) {
      return false;
    }
    const expected = Buffer.from(this.#sign(`${expiry}.${nonce}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    const expires = Number.parseInt(expiry, 36);
    if (!(this.#now() < expires)) return false;
    return this.#spend(nonce, new Date(expires));
  }

  #sign(payload: string): string {
    return createHmac("sha256", this.#key).update(payload).digest("base64url").slice(0, 32);
  }
}

/** One gateway's record of traded codes, each forgotten once it has expired anyway. */
function spentInMemory(now: () => number): SpendLinkCode {
  const spent = new Map<string, number>();
  return async (nonce, expiresAt) => {
    for (const [old, expires] of spent) if (expires <= now()) spent.delete(old);
    if (spent.has(nonce) || spent.size >= MAX_SPENT) return false;
    spent.set(nonce, expiresAt.getTime());
    return true;
  };
}
