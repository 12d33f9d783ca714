/**
 * The README's nginx configuration, run by a real nginx in front of two gateway workers on one
 * PostgreSQL: the page's requests (its `Host` and `Origin`, a name on a non-default port) are
 * accepted through it, an event stream through it carries each event while it stays open, and
 * a worker that goes away leaves the proxy answering through the other. With `$host` instead
 * of `$http_host` the port is dropped and the gateway refuses the page's POSTs, as the README
 * says.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NginxProxy, startNginx } from "../fixtures/nginx-proxy.js";
import { type PostgresCluster, startPostgresCluster } from "../fixtures/postgres-cluster.js";
import { startTestGateway, type TestGateway, waitFor } from "./helpers.js";

const NAME = "rudder.test";
let cluster: PostgresCluster;
const gateways: TestGateway[] = [];
const proxies: NginxProxy[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  await Promise.allSettled(proxies.map((proxy) => proxy.stop()));
  await Promise.allSettled(gateways.map((gateway) => gateway.cleanup()));
  await cluster?.destroy();
});

async function workers(): Promise<TestGateway[]> {
  const url = await cluster.createDatabase();
  const started = await Promise.all(
    ["nginx-a", "nginx-b"].map((name) =>
      startTestGateway({
        prefix: `cluster-${name}`,
        store: { kind: "postgres", url },
        workerName: name,
        leaseSeconds: 2,
        allowedHosts: [NAME],
      }),
    ),
  );
  gateways.push(...started);
  return started;
}

const upstream = (gateway: TestGateway) => new URL(gateway.url).host;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A request as the page sends it through the proxy: `Host: rudder.test:<port>`, its Origin. */
function throughProxy(
  proxy: NginxProxy,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const host = `${NAME}:${proxy.port}`;
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: "127.0.0.1",
        port: proxy.port,
        method,
        path,
        headers: {
          host,
          origin: `http://${host}`,
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
      },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8");
        });
        response.on("end", () => {
          try {
            resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
          } catch {
            resolve({ status: response.statusCode ?? 0, body: { text } });
          }
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** An event stream through the proxy, collecting each event's data as it arrives. */
function streamThroughProxy(proxy: NginxProxy, token: string, channel: string) {
  const events: Array<Record<string, unknown>> = [];
  let ended = false;
  const outgoing = request({
    host: "127.0.0.1",
    port: proxy.port,
    path: `/api/channels/${channel}/events`,
    headers: { host: `${NAME}:${proxy.port}`, authorization: `Bearer ${token}` },
  });
  let status = 0;
  outgoing.on("response", (response) => {
    status = response.statusCode ?? 0;
    let buffer = "";
    response.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart());
        buffer = buffer.slice(end + 2);
        if (data.length > 0) events.push(JSON.parse(data.join("\n")));
      }
    });
    response.on("end", () => {
      ended = true;
    });
  });
  outgoing.on("error", () => {
    ended = true;
  });
  outgoing.end();
  return {
    events,
    status: () => status,
    ended: () => ended,
    close: () => outgoing.destroy(),
  };
}

describe("the README's nginx configuration in front of two workers", () => {
  it("passes the page's requests and streams events as they happen, across both workers", async () => {
    const [a, b] = await workers();
    const proxy = await startNginx([upstream(a!), upstream(b!)]);
    proxies.push(proxy);
    const token = a!.token;
    const stream = streamThroughProxy(proxy, token, "proxied");
    try {
      await waitFor(() => stream.status() === 200, "the event stream through nginx");
      // Round robin: the posts reach both workers; each is answered, and the stream (on one
      // of them) carries every reply while it stays open.
      const ids: string[] = [];
      for (const text of ["one", "two", "three", "four"]) {
        const posted = await throughProxy(proxy, token, "POST", "/api/channels/proxied/messages", {
          text,
        });
        expect(posted.status, JSON.stringify(posted.body)).toBe(202);
        ids.push(posted.body.id as string);
        await waitFor(
          () =>
            stream.events.some(
              (event) =>
                event.type === "reply" &&
                (event.message as { replyTo?: string }).replyTo === posted.body.id,
            ),
          `the reply to "${text}" on the stream through nginx`,
          30_000,
        );
      }
      expect(stream.ended()).toBe(false);
      const dispositions = await a!.messages("proxied");
      expect(dispositions.filter((message) => message.kind === "reply")).toHaveLength(4);

      // A worker that goes away: the proxy answers through the other.
      await b!.cleanup();
      gateways.splice(gateways.indexOf(b!), 1);
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const health = await throughProxy(proxy, token, "GET", "/api/health");
        expect(health.status).toBe(200);
        expect(health.body.worker).toBe("nginx-a");
      }
      const after = await throughProxy(proxy, token, "POST", "/api/channels/proxied/messages", {
        text: "five",
      });
      expect(after.status).toBe(202);
    } finally {
      stream.close();
    }
  });

  it("with $host instead of $http_host, refuses the page's POSTs on a non-default port", async () => {
    const [a, b] = await workers();
    const proxy = await startNginx([upstream(a!), upstream(b!)], (snippet) =>
      snippet.replace("proxy_set_header Host $http_host;", "proxy_set_header Host $host;"),
    );
    proxies.push(proxy);
    expect(proxy.config).toContain("proxy_set_header Host $host;");
    const health = await throughProxy(proxy, a!.token, "GET", "/api/health");
    expect(health.status).toBe(200);
    const posted = await throughProxy(proxy, a!.token, "POST", "/api/channels/x/messages", {
      text: "hello",
    });
    expect(posted.status).toBe(403);
    expect(String(posted.body.error)).toMatch(/cross-origin POST refused/);
  });
});
