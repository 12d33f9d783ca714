import { unlinkSync } from "node:fs";
import { connect, createServer, type LookupFunction, type Server, type Socket } from "node:net";

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
    const upstream = connect({
      host: destination.host,
      port: destination.port,
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    });
    upstream.on("error", (error) => {
      if (!client.destroyed)
        refuse(client, "502 Bad Gateway", `${destination.host}: ${error.message}`);
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
 * rudder connects; anything else is answered 403 with the reason. Resolves
 * once it listens.
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
