/**
 * The nginx configuration of docs/cluster.md, run by a real nginx in front of two gateway workers on one
 * PostgreSQL: the page's requests (its `Host` and `Origin`, a name on a non-default port) are
 * accepted through it, an event stream through it carries each event while it stays open, and
 * a worker that goes away leaves the proxy answering through the other. With `$host` instead
 * of `$http_host` the port is dropped and the gateway refuses the page's POSTs, as the page
 * says.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NginxProxy, startNginx } from "../helpers/nginx-proxy.js";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

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

/**
 * An event stream through the proxy, collecting each event's data as it arrives, from
 * `localAddress` (any 127.x address is loopback: a client on another machine, to the proxy).
 */
function streamThroughProxy(
  proxy: NginxProxy,
  token: string,
  channel: string,
  client: { localAddress?: string; headers?: Record<string, string> } = {},
) {
  const events: Array<Record<string, unknown>> = [];
  let ended = false;
  let body = "";
  const outgoing = request({
    host: "127.0.0.1",
    port: proxy.port,
    path: `/api/channels/${channel}/events`,
    ...(client.localAddress ? { localAddress: client.localAddress } : {}),
    headers: { host: `${NAME}:${proxy.port}`, authorization: `Bearer ${token}`, ...client.headers },
  });
  let status = 0;
  outgoing.on("response", (response) => {
    status = response.statusCode ?? 0;
    let buffer = "";
    response.on("data", (chunk: Buffer) => {
      if (status !== 200) {
        body += chunk.toString("utf8");
        return;
      }
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
    /** The body of an answer other than 200 (a refusal's `{error}`), once it ended. */
    body: () => (ended ? body : undefined),
    ended: () => ended,
    close: () => outgoing.destroy(),
  };
}

describe("the documented nginx configuration in front of two workers", () => {
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

  it("with --trust-proxy naming it, caps each forwarded client on its own, whatever a client claims", async () => {
    // One worker behind each proxy, so that every stream meets the same cap of one per client.
    const options = { allowedHosts: [NAME], maxEventStreamsPerClient: 1 };
    const trusting = await startTestGateway({
      prefix: "nginx-trust",
      ...options,
      trustProxy: ["127.0.0.1"],
    });
    gateways.push(trusting);
    const ignoring = await startTestGateway({ prefix: "nginx-ignore", ...options });
    gateways.push(ignoring);
    const trustingProxy = await startNginx([upstream(trusting)]);
    proxies.push(trustingProxy);
    const ignoringProxy = await startNginx([upstream(ignoring)]);
    proxies.push(ignoringProxy);
    expect(trustingProxy.config).toContain(
      "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
    );
    const streams: Array<ReturnType<typeof streamThroughProxy>> = [];
    /** A stream from a client at `localAddress` (any 127.x address: another machine, to nginx). */
    const open = (
      proxy: NginxProxy,
      gateway: TestGateway,
      localAddress: string,
      headers: Record<string, string> = {},
    ) => {
      const stream = streamThroughProxy(proxy, gateway.token, "capped", { localAddress, headers });
      streams.push(stream);
      return stream;
    };
    const refusal = async (stream: ReturnType<typeof streamThroughProxy>) => {
      const body = await waitFor(() => stream.body(), "the refusal");
      expect(stream.status()).toBe(503);
      return body;
    };
    try {
      const first = open(trustingProxy, trusting, "127.0.0.2");
      const second = open(trustingProxy, trusting, "127.0.0.3");
      await waitFor(
        () => first.status() === 200 && second.status() === 200,
        "a stream for each of two clients",
      );
      expect(await refusal(open(trustingProxy, trusting, "127.0.0.2"))).toContain(
        "too many event streams open from 127.0.0.2 ",
      );
      // A client naming itself someone else in its own X-Forwarded-For is still itself.
      const claiming = open(trustingProxy, trusting, "127.0.0.4", {
        "x-forwarded-for": "127.0.0.9",
      });
      await waitFor(() => claiming.status() === 200, "the stream of a third client");
      const evading = open(trustingProxy, trusting, "127.0.0.4", {
        "x-forwarded-for": "127.0.0.10",
      });
      expect(await refusal(evading)).toContain("too many event streams open from 127.0.0.4 ");
      expect(trusting.eventStreams()).toBe(3);

      // Without --trust-proxy, every client behind the proxy is the proxy.
      const alone = open(ignoringProxy, ignoring, "127.0.0.2");
      await waitFor(() => alone.status() === 200, "the first client's stream");
      expect(await refusal(open(ignoringProxy, ignoring, "127.0.0.3"))).toContain(
        "too many event streams open from 127.0.0.1 ",
      );
    } finally {
      for (const stream of streams) stream.close();
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
