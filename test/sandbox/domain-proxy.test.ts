/**
 * The sandbox's domain proxy, spoken to on its unix socket as a command inside would: only valid
 * host names and ports pass, a bad request is a 400 (never a crash), and the address connected to
 * is the one that was checked.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect as dial, type LookupFunction, type Server } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type DomainProxy,
  refusedAddress,
  requestTarget,
  startDomainProxy,
} from "../../src/sandbox/domain-proxy.js";

let proxy: DomainProxy | undefined;
let folder: string | undefined;
const servers: Server[] = [];
afterEach(() => {
  proxy?.close();
  proxy = undefined;
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  folder = undefined;
  for (const server of servers.splice(0)) server.close();
});

/** A TCP server on loopback counting its connections, answering each with "reached". */
async function target(): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.end("reached\n");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as { port: number }).port, connections: () => count };
}

async function startProxy(allowed: string[], lookup: LookupFunction): Promise<DomainProxy> {
  folder = mkdtempSync(join(tmpdir(), "rudder-proxy-test-"));
  proxy = await startDomainProxy({
    socketPath: join(folder, "proxy.sock"),
    allowed,
    denied: [],
    lookup,
    reachLoopback: true,
  });
  return proxy;
}

/** Sends `request` raw and returns all the proxy answered until it closed. */
function exchange(socketPath: string, request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = dial(socketPath);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.write(request);
  });
}

describe("the domain proxy", () => {
  it("refuses a host name with a NUL, a bad port, and any malformed request with a 400, and keeps serving", async () => {
    const { port, connections } = await target();
    const looked: string[] = [];
    const lookup: LookupFunction = (hostname, _options, callback) => {
      looked.push(hostname);
      callback(null, [{ address: "127.0.0.1", family: 4 }] as never);
    };
    const { socketPath } = await startProxy(["*.example.com", "example.com"], lookup);
    for (const request of [
      `CONNECT 127.0.0.1\0.example.com:${port} HTTP/1.1\r\n\r\n`,
      "CONNECT example.com:99999 HTTP/1.1\r\n\r\n",
      "CONNECT example.com:0 HTTP/1.1\r\n\r\n",
      "CONNECT example.com:-1 HTTP/1.1\r\n\r\n",
      "CONNECT example.com:80x HTTP/1.1\r\n\r\n",
      "CONNECT example.com HTTP/1.1\r\n\r\n",
      "CONNECT [example.com]:443 HTTP/1.1\r\n\r\n",
      "CONNECT a b.example.com:443 HTTP/1.1\r\n\r\n",
      "CONNECT x%00.example.com:443 HTTP/1.1\r\n\r\n",
      `GET http://127.0.0.1%00.example.com:${port}/ HTTP/1.1\r\n\r\n`,
      "GET http://example.com:99999/ HTTP/1.1\r\n\r\n",
      "GET https://example.com/ HTTP/1.1\r\n\r\n",
      "GET http://user:pass@example.com/ HTTP/1.1\r\n\r\n",
      "\r\n\r\n",
      "CONNECT example.com:443\r\n\r\n",
    ]) {
      const answer = await exchange(socketPath, Buffer.from(request, "latin1"));
      expect(answer, JSON.stringify(request)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    }
    expect(looked).toEqual([]);
    expect(connections()).toBe(0);
    // Still alive, and a good request passes.
    const good = await exchange(socketPath, `CONNECT api.example.com:${port} HTTP/1.1\r\n\r\n`);
    expect(good).toBe("HTTP/1.1 200 Connection Established\r\n\r\nreached\n");
    expect(looked).toEqual(["api.example.com"]);
  });

  it("resolves a name once and connects to the address it checked", async () => {
    const { port, connections } = await target();
    // A rebinding DNS: a harmless answer first, the gateway's loopback after.
    let calls = 0;
    const lookup: LookupFunction = (_hostname, _options, callback) => {
      calls += 1;
      const address = calls === 1 ? "127.0.0.1" : "169.254.169.254";
      callback(null, [{ address, family: 4 }] as never);
    };
    const { socketPath } = await startProxy(["rebind.example.com"], lookup);
    const answer = await exchange(
      socketPath,
      `CONNECT rebind.example.com:${port} HTTP/1.1\r\n\r\n`,
    );
    expect(answer).toContain("reached");
    expect(calls).toBe(1);
    expect(connections()).toBe(1);
  });

  it("parses only valid targets", () => {
    expect(requestTarget("CONNECT", "example.com:443")).toEqual({ host: "example.com", port: 443 });
    expect(requestTarget("CONNECT", "[::1]:8080")).toEqual({ host: "::1", port: 8080 });
    expect(requestTarget("GET", "http://Example.com/x")).toEqual({ host: "example.com", port: 80 });
    expect(requestTarget("CONNECT", "a\0.example.com:443")).toBeUndefined();
    expect(requestTarget("CONNECT", "example.com:65536")).toBeUndefined();
    expect(requestTarget("CONNECT", `${"a".repeat(64)}.com:443`)).toBeUndefined();
  });

  it("never reaches this machine's own addresses (the gateway on 0.0.0.0)", () => {
    const own = Object.values(networkInterfaces())
      .flatMap((entries) => entries ?? [])
      .filter((entry) => !entry.internal)
      .map((entry) => entry.address);
    for (const address of own) expect(refusedAddress(address), address).toBeDefined();
    const ownV4 = own.find(
      (address) => /^\d+\.\d+\.\d+\.\d+$/.test(address) && !address.startsWith("169.254."),
    );
    if (ownV4 !== undefined) expect(refusedAddress(ownV4)).toBe("an address of this machine");
    expect(refusedAddress("127.0.0.1")).toBe("a loopback address");
    expect(refusedAddress("::ffff:127.0.0.1")).toBe("a loopback address");
    if (!own.includes("198.51.100.7")) expect(refusedAddress("198.51.100.7")).toBeUndefined();
  });
});
