/**
 * The Fetch standard's `Headers`, without loading Node's fetch implementation.
 *
 * Node defines the global `Headers` lazily: the first touch loads undici, its whole fetch stack,
 * which costs a fresh process about 30 ms and 9 MB, a fifth of what a one-shot `rudder run`
 * needs in all. The Anthropic SDK touches `Headers` on every request (it merges its headers into
 * one), and `nodeHttpFetch` never needs the rest of undici, so the bundled CLI substitutes this
 * class for the global (see `scripts/bundle-cli.mjs`); everywhere else the global is used.
 *
 * Behaves as the standard says and as the global does (the tests compare the two): names are
 * validated as HTTP tokens and matched without case; values lose surrounding whitespace and must
 * not hold NUL, CR or LF; `get` joins repeated values with ", "; iteration is sorted by the
 * lower-cased name and yields each `set-cookie` on its own.
 */
type HeadersInitLike = Headers | Iterable<readonly string[]> | Record<string, string> | undefined;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const SURROUNDING_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const FORBIDDEN_IN_VALUE = /[\0\r\n]/;
const SET_COOKIE = "set-cookie";

function headerName(name: unknown): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: invalid header name "${text}"`);
  return text.toLowerCase();
}

/** Header values are byte strings: each character one byte, as `fetch` requires. */
function isByteString(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    if (text.charCodeAt(index) > 0xff) return false;
  }
  return true;
}

function headerValue(value: unknown, name: string): string {
  const text = String(value).replace(SURROUNDING_WHITESPACE, "");
  if (FORBIDDEN_IN_VALUE.test(text) || !isByteString(text)) {
    throw new TypeError(`Headers: invalid value for header "${name}"`);
  }
  return text;
}

export class LightHeaders implements Headers {
  /** Lower-cased name -> its values in the order they were appended. */
  readonly #values = new Map<string, string[]>();

  constructor(init?: HeadersInitLike) {
    if (init === undefined || init === null) return;
    if (typeof init !== "object") {
      throw new TypeError("Headers: init must be an object, a Headers or a list of pairs");
    }
    if (Symbol.iterator in init) {
      for (const pair of init as Iterable<readonly string[]>) {
        if (typeof pair !== "object" || pair === null || !(Symbol.iterator in pair)) {
          throw new TypeError("Headers: each header must be a [name, value] pair");
        }
        const items = [...pair];
        if (items.length !== 2) {
          throw new TypeError("Headers: each header must be a [name, value] pair");
        }
        this.append(items[0] as string, items[1] as string);
      }
      return;
    }
    for (const [name, value] of Object.entries(init)) this.append(name, value);
  }

  append(name: string, value: string): void {
    const key = headerName(name);
    const normalized = headerValue(value, key);
    const existing = this.#values.get(key);
    if (existing === undefined) this.#values.set(key, [normalized]);
    else existing.push(normalized);
  }

  set(name: string, value: string): void {
    const key = headerName(name);
    this.#values.set(key, [headerValue(value, key)]);
  }

  delete(name: string): void {
    this.#values.delete(headerName(name));
  }

  has(name: string): boolean {
    return this.#values.has(headerName(name));
  }

  get(name: string): string | null {
    return this.#values.get(headerName(name))?.join(", ") ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.#values.get(SET_COOKIE) ?? [])];
  }

  forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown) {
    for (const [name, value] of this) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    const names = [...this.#values.keys()].sort((left, right) =>
      left < right ? -1 : left > right ? 1 : 0,
    );
    for (const name of names) {
      const values = this.#values.get(name) ?? [];
      if (name === SET_COOKIE) for (const value of values) yield [name, value];
      else yield [name, values.join(", ")];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}
