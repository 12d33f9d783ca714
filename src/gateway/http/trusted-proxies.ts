import { BlockList, isIP } from "node:net";

/** What `--trust-proxy` takes, for the refusal of anything else. */
const EXPECTED = 'an IP address, a CIDR such as 10.0.0.0/24, or "loopback"';

/** An address as written in a socket or an `X-Forwarded-For` entry, or undefined if none. */
function addressOf(entry: string): string | undefined {
  let text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1] ?? "";
  else if (/^[\d.]+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(":"));
  if (isIP(text) === 0) return undefined;
  // An IPv4 client of a dual-stack socket is the same client as over IPv4.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  return mapped ? (mapped[1] ?? text) : text.toLowerCase();
}

const family = (address: string) => (isIP(address) === 4 ? "ipv4" : "ipv6");

/** Adds one `--trust-proxy` entry to the list; false when it is not one. */
function addEntry(list: BlockList, entry: string): boolean {
  if (entry.toLowerCase() === "loopback") {
    list.addSubnet("127.0.0.0", 8, "ipv4");
    list.addAddress("::1", "ipv6");
    return true;
  }
  const [address = "", prefix, ...rest] = entry.split("/");
  if (rest.length > 0 || isIP(address) === 0) return false;
  try {
    if (prefix === undefined) {
      const canonical = addressOf(address) ?? address;
      list.addAddress(canonical, family(canonical));
      return true;
    }
    const bits = Number(prefix);
    if (!/^\d{1,3}$/.test(prefix) || bits > (family(address) === "ipv4" ? 32 : 128)) return false;
    list.addSubnet(address, bits, family(address));
    return true;
  } catch {
    // An address `isIP` takes that the list does not (a zone index, `fe80::1%eth0`).
    return false;
  }
}

/**
 * The reverse proxies whose `X-Forwarded-For` is believed (`--trust-proxy`), and so who a
 * request's client is: the peer of the socket, unless that is a trusted proxy; then the
 * right-most address in `X-Forwarded-For` that is not a trusted proxy (each proxy appends the
 * address it was reached from, so what lies left of an untrusted one is the client's own word).
 * With none trusted (the default, loopback included), `X-Forwarded-For` is ignored, so a
 * client cannot name itself anyone else.
 */
export class TrustedProxies {
  readonly #list: BlockList;
  readonly #none: boolean;

  private constructor(list: BlockList, entries: number) {
    this.#list = list;
    this.#none = entries === 0;
  }

  /** Nobody's: the client is always the socket's peer. */
  static readonly none = new TrustedProxies(new BlockList(), 0);

  /** The proxies of `entries` (addresses, CIDRs, `loopback`), or an error naming a bad one. */
  static parse(entries: readonly string[]): TrustedProxies | Error {
    const list = new BlockList();
    for (const entry of entries) {
      if (!addEntry(list, entry.trim())) {
        return new Error(`--trust-proxy: "${entry}" is not ${EXPECTED}`);
      }
    }
    return new TrustedProxies(list, entries.length);
  }

  /** Whether the address is one of the trusted proxies. */
  trusts(address: string): boolean {
    const canonical = addressOf(address);
    if (this.#none || canonical === undefined) return false;
    try {
      return this.#list.check(canonical, family(canonical));
    } catch {
      return false;
    }
  }

  /**
   * The client of a request from `peer` (the socket's remote address) carrying
   * `forwardedFor` (its `X-Forwarded-For`, several headers joined with commas). An entry that
   * is not an address ends the walk: the trusted proxy that passed it on is then the client.
   */
  client(peer: string | undefined, forwardedFor: string | undefined): string {
    const direct = peer === undefined ? undefined : addressOf(peer);
    if (direct === undefined) return peer ?? "unknown";
    if (forwardedFor === undefined || !this.trusts(direct)) return direct;
    const hops = forwardedFor.split(",");
    let client = direct;
    for (let index = hops.length - 1; index >= 0 && this.trusts(client); index -= 1) {
      const hop = addressOf(hops[index] ?? "");
      if (hop === undefined) break;
      client = hop;
    }
    return client;
  }
}
