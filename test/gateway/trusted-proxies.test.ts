import { describe, expect, it } from "vitest";
import { TrustedProxies } from "../../src/gateway/http/trusted-proxies.js";

function trusting(...entries: string[]): TrustedProxies {
  const proxies = TrustedProxies.parse(entries);
  if (proxies instanceof Error) throw proxies;
  return proxies;
}

describe("who a request's client is (--trust-proxy)", () => {
  it("is the socket's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    const none = trusting();
    expect(none.client("127.0.0.1", "203.0.113.7")).toBe("127.0.0.1");
    expect(none.client("10.0.0.5", "203.0.113.7, 10.0.0.5")).toBe("10.0.0.5");
    // Loopback is not trusted by default either.
    expect(none.trusts("127.0.0.1")).toBe(false);
    expect(none.trusts("::1")).toBe(false);
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", () => {
    const proxies = trusting("10.0.0.5");
    expect(proxies.client("203.0.113.9", "198.51.100.1")).toBe("203.0.113.9");
    expect(proxies.client("10.0.0.6", "198.51.100.1")).toBe("10.0.0.6");
  });

  it("is the right-most address that is not a trusted proxy", () => {
    const proxies = trusting("10.0.0.0/24", "192.0.2.1");
    expect(proxies.client("10.0.0.5", "203.0.113.7")).toBe("203.0.113.7");
    // Two proxies in a row (a CDN then nginx), each appending the address it was reached from.
    expect(proxies.client("10.0.0.5", "203.0.113.7, 192.0.2.1")).toBe("203.0.113.7");
    // A client that sends its own X-Forwarded-For gains nothing: what it wrote is left of the
    // address the trusted proxy saw.
    expect(proxies.client("10.0.0.5", "198.51.100.1, 203.0.113.7")).toBe("203.0.113.7");
    expect(proxies.client("10.0.0.5", "10.0.0.9, 203.0.113.7")).toBe("203.0.113.7");
  });

  it("is the left-most address when every hop is a trusted proxy", () => {
    const proxies = trusting("loopback");
    expect(proxies.client("127.0.0.1", "127.0.0.3, 127.0.0.2")).toBe("127.0.0.3");
  });

  it("stops at an entry that is not an address: the proxy that passed it on is the client", () => {
    const proxies = trusting("10.0.0.0/8");
    expect(proxies.client("10.0.0.5", "unknown")).toBe("10.0.0.5");
    expect(proxies.client("10.0.0.5", "garbage, 10.1.1.1")).toBe("10.1.1.1");
    expect(proxies.client("10.0.0.5", "")).toBe("10.0.0.5");
    expect(proxies.client("10.0.0.5", "203.0.113.7,,10.1.1.1")).toBe("10.1.1.1");
    expect(proxies.client("10.0.0.5", undefined)).toBe("10.0.0.5");
  });

  it("reads IPv6, ports, brackets and IPv4-mapped addresses", () => {
    const proxies = trusting("loopback", "2001:db8::/32");
    expect(proxies.client("::1", "2001:DB8::1, [2001:db9::7]:443")).toBe("2001:db9::7");
    expect(proxies.client("::ffff:127.0.0.1", "203.0.113.7:51234")).toBe("203.0.113.7");
    expect(proxies.client("::ffff:127.0.0.1", "::ffff:203.0.113.7")).toBe("203.0.113.7");
    // The peer is named as an IPv4 address however the socket wrote it.
    expect(trusting().client("::ffff:198.51.100.4", undefined)).toBe("198.51.100.4");
    expect(trusting().client(undefined, "203.0.113.7")).toBe("unknown");
  });

  it("trusts loopback, an address or a CIDR, and refuses anything else in one line", () => {
    const proxies = trusting("loopback", "10.1.0.0/16", "192.0.2.1", "::ffff:198.51.100.0/120");
    expect(proxies.trusts("127.5.6.7")).toBe(true);
    expect(proxies.trusts("10.1.200.3")).toBe(true);
    expect(proxies.trusts("10.2.0.1")).toBe(false);
    expect(proxies.trusts("192.0.2.1")).toBe(true);
    expect(proxies.trusts("192.0.2.2")).toBe(false);
    expect(proxies.trusts("198.51.100.77")).toBe(true);
    for (const bad of [
      "10.0.0.300",
      "10.0.0.0/33",
      "::/129",
      "10.0.0.0/8/8",
      "proxy.internal",
      "",
    ]) {
      const parsed = TrustedProxies.parse(["loopback", bad]);
      expect(parsed).toBeInstanceOf(Error);
      expect((parsed as Error).message).toBe(
        `--trust-proxy: "${bad}" is not an IP address, a CIDR such as 10.0.0.0/24, or "loopback"`,
      );
    }
    expect(TrustedProxies.parse(["10.0.0.0/x"])).toBeInstanceOf(Error);
    expect(TrustedProxies.parse(["[::1]"])).toBeInstanceOf(Error);
    expect(TrustedProxies.parse(["10.0.0.1:80"])).toBeInstanceOf(Error);
  });
});
