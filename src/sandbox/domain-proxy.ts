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

/**
 * Why the proxy will not connect to `address` (an allowed name may resolve
 * anywhere: a rebinding DNS, a stale record), or undefined: loopback (the
 * gateway's API, the host's services), unspecified and link-local (cloud
 * metadata at 169.254.169.254). Private ranges stay reachable: an allowed
 * internal registry lives there.
 */
export function refusedAddress(address: string, reachLoopback = false): string | undefined {
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

/** Resolves like `lookup`, refusing an address `refusedAddress` names. */
function checkedLookup(options: DomainProxyOptions): LookupFunction {
  const resolve = options.lookup ?? (systemLookup as unknown as LookupFunction);
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, lookupOptions, (error, address, family) => {
      if (error) {
        callback(error, "", 4);
        return;
      }
      const found = Array.isArray(address) ? address : [{ address, family }];
      const kept = found.filter(
        (entry) => refusedAddress(entry.address, options.reachLoopback) === undefined,
      );
      const first = found[0];
      if (kept.length === 0 && first !== undefined) {
        const why = refusedAddress(first.address, options.reachLoopback);
        const refusal = Object.assign(
          new Error(
            `${hostname} resolves to ${first.address}, ${why}, which the sandbox never reaches`,
          ),
          { code: "EACCES" },
        );
        callback(refusal, "", 4);
        return;
      }
      if (Array.isArray(address)) callback(null, kept as never);
      else callback(null, address, family);
    });
  };
}

/** `host:port` of a CONNECT target or an absolute URL, with the default port. */
function target(method: string, uri: string): { host: string; port: number } | undefined {
  if (method === "CONNECT") {
    const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(uri);
    return match ? { host: match[1] as string, port: Number(match[2]) } : undefined;
  }
  try {
    const url = new URL(uri);
    if (url.protocol !== "http:") return undefined;
    return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 80) };
  } catch {
    return undefined;
  }
}

function refuse(client: Socket, status: string, text: string): void {
  const body = `rudder sandbox: ${text}\n`;
  client.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function handle(client: Socket, options: DomainProxyOptions): void {
  let head = Buffer.alloc(0);
  client.on("error", () => client.destroy());
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end === -1) {
      if (head.length > MAX_HEAD_BYTES)
        refuse(client, "431 Request Header Fields Too Large", "request head too large");
      return;
    }
    client.off("data", onData);
    const lines = head.subarray(0, end).toString("latin1").split("\r\n");
    const [method = "", uri = "", version = "HTTP/1.1"] = (lines[0] ?? "").split(" ");
    const destination = target(method, uri);
    if (destination === undefined) {
      refuse(
        client,
        "400 Bad Request",
        "the proxy takes CONNECT host:port or an absolute http:// URL",
      );
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
    const literal = refusedAddress(destination.host, options.reachLoopback);
    if (literal !== undefined) {
      refuse(
        client,
        "403 Forbidden",
        `${destination.host} is ${literal}, which the sandbox never reaches`,
      );
      return;
    }
    const upstream = connect({
      host: destination.host,
      port: destination.port,
      lookup: checkedLookup(options),
    });
    upstream.on("error", (error) => {
      if (!client.destroyed) {
        const status =
          (error as NodeJS.ErrnoException).code === "EACCES" ? "403 Forbidden" : "502 Bad Gateway";
        refuse(
          client,
          status,
          error.message.startsWith(destination.host)
            ? error.message
            : `${destination.host}: ${error.message}`,
        );
      }
      upstream.destroy();
    });
    upstream.on("connect", () => {
      if (method === "CONNECT") {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head.subarray(end + 4));
      } else {
        const url = new URL(uri);
        const requestLine = `${method} ${url.pathname}${url.search} ${version}`;
        const headers = lines.slice(1).filter((line) => !/^proxy-/i.test(line));
        upstream.write(`${[requestLine, ...headers].join("\r\n")}\r\n\r\n`);
        upstream.write(head.subarray(end + 4));
      }
      client.pipe(upstream).pipe(client);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
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
