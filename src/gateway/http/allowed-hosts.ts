import { networkInterfaces } from "node:os";

/** The names a gateway answers to by default, on its own port. */
export const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "";
}

/** A listen address or `Host` name as it appears in a `Host` header: IPv6 in brackets. */
function hostName(host: string): string {
  const lower = host.toLowerCase();
  return lower.split(":").length > 2 && !lower.startsWith("[") ? `[${lower}]` : lower;
}

/** Splits a `Host` header into its name (lower case, no trailing dot) and port ("" if none). */
export function splitHost(header: string): { name: string; port: string } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(header.trim().toLowerCase());
  if (match === null) return { name: header.toLowerCase(), port: "" };
  return { name: (match[1] ?? "").replace(/\.$/, ""), port: match[2] ?? "" };
}

/**
 * The `Host` values the gateway serves, so that a page on another name that resolves to it
 * (DNS rebinding) is refused: the loopback names and the listen address (every interface's
 * address when it listens on all) on the gateway's port, plus the `--allowed-hosts` entries,
 * each `name` (any port) or `name:port`.
 */
export class AllowedHosts {
  readonly #ownNames = new Set<string>();
  readonly #extra: Array<{ name: string; port: string }>;
  #port = "";

  constructor(listenHost: string, extra: readonly string[] = []) {
    for (const name of LOOPBACK_NAMES) this.#ownNames.add(name);
    if (isWildcard(listenHost)) {
      for (const addresses of Object.values(networkInterfaces())) {
        for (const address of addresses ?? []) this.#ownNames.add(hostName(address.address));
      }
    } else {
      this.#ownNames.add(hostName(listenHost));
    }
    this.#extra = extra.map((entry) => splitHost(hostName(entry.trim())));
  }

  /** The port the gateway listens on, known once it does. */
  setPort(port: number): void {
    this.#port = String(port);
  }

  allows(header: string | undefined): boolean {
    if (header === undefined || header === "") return false;
    const { name, port } = splitHost(header);
    const effectivePort = port === "" ? "80" : port;
    if (this.#ownNames.has(name) && effectivePort === this.#port) return true;
    return this.#extra.some(
      (entry) => entry.name === name && (entry.port === "" || entry.port === effectivePort),
    );
  }

  /** For the refusal: what is served, e.g. `127.0.0.1:4317, localhost:4317, [::1]:4317`. */
  describe(): string {
    const own = [...this.#ownNames].slice(0, 4).map((name) => `${name}:${this.#port}`);
    const extra = this.#extra.map((entry) =>
      entry.port ? `${entry.name}:${entry.port}` : entry.name,
    );
    return [...own, ...extra].join(", ");
  }
}
