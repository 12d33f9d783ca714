import { lookup as systemLookup } from "node:dns";
import { unlinkSync } from "node:fs";
import {
  connect,
  createServer,
  isIP,
  type LookupFunction,
  type Server,
  type Socket,
} from "node:net";
import { networkInterfaces } from "node:os";

/** Longest request head (request line and headers) the proxy reads before giving up. */
const MAX_HEAD_BYTES = 64 * 1024;

export interface DomainProxyOptions {
  /** Where the proxy listens: a unix socket, reachable from inside the sandbox's network namespace. */
  socketPath: string;
  /** `example.com` (that host), `*.example.com` (its subdomains), as Claude Code writes them. */
  allowed: readonly string[];
  /** Refused even when allowed. */
  denied: readonly string[];
  /** How host names are resolved (tests map names to loopback); default the system's. */
  lookup?: LookupFunction;
  /** Let allowed names reach loopback addresses (only tests, whose servers are there, set it). */
  reachLoopback?: boolean;
}

export interface DomainProxy {
  socketPath: string;
  close(): void;
}

/** Whether `host` matches a domain pattern: the name itself, or any subdomain for `*.`. */
export function domainMatches(host: string, pattern: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  const wanted = pattern.toLowerCase().trim();
  if (wanted.startsWith("*.")) return name.endsWith(wanted.slice(1));
  return name === wanted;
}

function allowedHost(host: string, options: DomainProxyOptions): boolean {
  if (options.denied.some((pattern) => domainMatches(host, pattern))) return false;
  return options.allowed.some((pattern) => domainMatches(host, pattern));
}

/** Whether `address` is one of this machine's own (any interface's), looked up each time. */
function ownAddress(address: string): boolean {
  const wanted = address.toLowerCase();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.address.toLowerCase() === wanted) return true;
    }
  }
  return false;
}

/**
 * Why the proxy will not connect to `address` (an allowed name may resolve
 * anywhere: a rebinding DNS, a stale record), or undefined: loopback (the
 * gateway's API, the host's services), this machine's own addresses (the
 * same services when they listen on all interfaces, the gateway with
 * `--host 0.0.0.0`), unspecified and link-local (cloud metadata at
 * 169.254.169.254). Other private addresses stay reachable: an allowed
 * internal registry lives there.
 */
export function refusedAddress(address: string, reachLoopback = false): string | undefined {
  const refused = refusedRange(address, reachLoopback);
  if (refused !== undefined || reachLoopback) return refused;
  return ownAddress(address.replace(/^::ffff:/i, "")) ? "an address of this machine" : undefined;
}

function refusedRange(address: string, reachLoopback: boolean): string | undefined {
  const v4 = address.replace(/^::ffff:/i, "");
  if (isIP(v4) === 4) {
    const [first, second] = v4.split(".").map(Number);
    if (first === 127) return reachLoopback ? undefined : "a loopback address";
    if (first === 0) return "an unspecified address";
    if (first === 169 && second === 254) return "a link-local address";
    return undefined;
  }
  const lower = address.toLowerCase();
  if (lower === "::1") return reachLoopback ? undefined : "a loopback address";
  if (lower === "::") return "an unspecified address";
  if (/^fe[89ab]/.test(lower)) return "a link-local address";
  return undefined;
}

/** A DNS name: letters, digits, `-` and `_` in labels of 1-63, 253 at most, a final dot allowed. */
const HOST_NAME =
  /^(?=.{1,253}\.?$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/**
 * Whether `host` is a host name or an IP address and nothing else. The allow-list compares
 * strings, and the resolver reads a name only up to a NUL (`192.0.2.2\0.example.com` ends in an
 * allowed suffix and resolves to 192.0.2.2), so any other character refuses the request.
 */
export function validHost(host: string): boolean {
  return isIP(host) !== 0 || HOST_NAME.test(host);
}

/** A port as a request may spell it: 1 to 65535 in decimal digits. */
function validPort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/**
 * `host:port` of a CONNECT target or an absolute `http://` URL (port 80 by default), or
 * undefined when either is not valid.
 */
export function requestTarget(
  method: string,
  uri: string,
): { host: string; port: number } | undefined {
  let host: string;
  let portText: string;
  if (method === "CONNECT") {
    const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):([^:]*)$/.exec(uri);
    if (match === null) return undefined;
    host = (match[1] ?? match[2]) as string;
    if (match[1] !== undefined && isIP(host) !== 6) return undefined;
    portText = match[3] as string;
  } else {
    if (!/^[A-Z]+$/.test(method)) return undefined;
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return undefined;
    }
    if (url.protocol !== "http:" || url.username !== "" || url.password !== "") return undefined;
    host = url.hostname.replace(/^\[|\]$/g, "");
    portText = url.port || "80";
  }
  const port = validPort(portText);
  if (port === undefined || !validHost(host)) return undefined;
  return { host, port };
}

/**
 * The address to connect to for `host`: resolved once here, each answer checked
 * (`refusedAddress`), the first one kept returned, so what is connected to is what was checked
 * (no second lookup by the socket, which a rebinding DNS could answer otherwise). An IP
 * literal is its own answer. Never rejects: a refusal or failure is `{ refused }` with the text.
 */
function resolveChecked(
  host: string,
  options: DomainProxyOptions,
): Promise<{ address: string } | { refused: string; status: string }> {
  const literal = isIP(host) === 0 ? undefined : host;
  const resolve = options.lookup ?? (systemLookup as unknown as LookupFunction);
  return new Promise((settle) => {
    const check = (found: readonly { address: string }[]): void => {
      const kept = found.find(
        (entry) => refusedAddress(entry.address, options.reachLoopback) === undefined,
      );
      if (kept !== undefined) {
        settle({ address: kept.address });
        return;
      }
      const first = found[0];
      const why =
        first === undefined ? undefined : refusedAddress(first.address, options.reachLoopback);
      settle(
        first === undefined
          ? { refused: `${host}: no address found`, status: "502 Bad Gateway" }
          : literal !== undefined
            ? {
                refused: `${host} is ${why}, which the sandbox never reaches`,
                status: "403 Forbidden",
              }
            : {
                refused: `${host} resolves to ${first.address}, ${why}, which the sandbox never reaches`,
                status: "403 Forbidden",
              },
      );
    };
    if (literal !== undefined) {
      check([{ address: literal }]);
      return;
    }
    try {
      resolve(host, { all: true }, (error, addresses) => {
        if (error) settle({ refused: `${host}: ${error.message}`, status: "502 Bad Gateway" });
        else check(Array.isArray(addresses) ? addresses : [{ address: String(addresses) }]);
      });
    } catch (error) {
      settle({ refused: `${host}: ${(error as Error).message}`, status: "502 Bad Gateway" });
    }
  });
}

function refuse(client: Socket, status: string, text: string): void {
  const body = `rudder sandbox: ${text.replace(/[^\x20-\x7e]/g, "?")}\n`;
  client.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const BAD_REQUEST =
  "the proxy takes CONNECT host:port or an absolute http:// URL, with a valid host name and a port from 1 to 65535";

/** Checks the request in `head` and relays it. Never throws: a bad request is answered 400. */
async function relay(
  client: Socket,
  head: Buffer,
  end: number,
  options: DomainProxyOptions,
): Promise<void> {
  const lines = head.subarray(0, end).toString("latin1").split("\r\n");
  const parts = (lines[0] ?? "").split(" ");
  const [method = "", uri = "", version = ""] = parts;
  const destination =
    parts.length === 3 && /^HTTP\/1\.[01]$/.test(version) ? requestTarget(method, uri) : undefined;
  if (destination === undefined) {
    refuse(client, "400 Bad Request", BAD_REQUEST);
    return;
  }
  if (!allowedHost(destination.host, options)) {
    refuse(
      client,
      "403 Forbidden",
      `${destination.host} is not in sandbox.network.allowedDomains (allowed: ${options.allowed.join(", ")})`,
    );
    return;
  }
  const resolved = await resolveChecked(destination.host, options);
  if ("refused" in resolved) {
    if (!client.destroyed) refuse(client, resolved.status, resolved.refused);
    return;
  }
  if (client.destroyed) return;
  const upstream = connect({ host: resolved.address, port: destination.port });
  upstream.on("error", (error) => {
    if (!client.destroyed)
      refuse(client, "502 Bad Gateway", `${destination.host}: ${error.message}`);
    upstream.destroy();
  });
  upstream.on("connect", () => {
    if (method === "CONNECT") {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    } else {
      const url = new URL(uri);
      const requestLine = `${method} ${url.pathname}${url.search} ${version}`;
      const headers = lines.slice(1).filter((line) => !/^proxy-/i.test(line));
      upstream.write(`${[requestLine, ...headers].join("\r\n")}\r\n\r\n`);
    }
    upstream.write(head.subarray(end + 4));
    client.pipe(upstream).pipe(client);
  });
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => client.destroy());
}

function handle(client: Socket, options: DomainProxyOptions): void {
  let head = Buffer.alloc(0);
  client.on("error", () => client.destroy());
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end === -1) {
      if (head.length > MAX_HEAD_BYTES) {
        client.off("data", onData);
        refuse(client, "431 Request Header Fields Too Large", "request head too large");
      }
      return;
    }
    client.off("data", onData);
    client.pause();
    relay(client, head, end, options).catch((error: Error) => {
      if (!client.destroyed) refuse(client, "400 Bad Request", error.message);
    });
  };
  client.on("data", onData);
}

/**
 * An HTTP proxy on a unix socket letting sandboxed commands reach only the
 * allowed domains, as Claude Code's sandbox does: `CONNECT host:port` (HTTPS
 * and any TLS) and plain `http://` requests, each checked by host name before
 * rudder connects, and then by the address the name resolves to
 * (`refusedAddress`); anything else is answered 403 with the reason.
 * Resolves once it listens.
 */
export function startDomainProxy(options: DomainProxyOptions): Promise<DomainProxy> {
  return new Promise((resolve, reject) => {
    const server: Server = createServer((client) => handle(client, options));
    server.on("error", reject);
    server.listen(options.socketPath, () => {
      server.off("error", reject);
      server.unref();
      resolve({
        socketPath: options.socketPath,
        close() {
          server.close();
          try {
            unlinkSync(options.socketPath);
          } catch {
            // Gone with its folder.
          }
        },
      });
    });
  });
}
