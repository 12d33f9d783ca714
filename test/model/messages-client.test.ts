import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../../src/model/api-error.js";
import { createMessagesClient } from "../../src/model/messages-client.js";

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

interface Seen {
  headers: IncomingMessage["headers"];
  url: string;
  body: string;
}

async function serve(
  handler: (request: IncomingMessage, response: ServerResponse, seen: Seen) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const entry = { headers: request.headers, url: request.url ?? "", body };
      seen.push(entry);
      handler(request, response, entry);
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function streamReply(response: ServerResponse, events: string[]): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  for (const event of events) response.write(event);
  response.end();
}

async function collect(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const all: unknown[] = [];
  for await (const event of events) all.push(event);
  return all;
}

const signal = () => new AbortController().signal;

describe("createMessagesClient", () => {
  it("posts the body with stream on and the API's headers, and yields the events but pings", async () => {
    const { url, seen } = await serve((_request, response) =>
      streamReply(response, [
        'event: message_start\ndata: {"type":"message_start"}\n\n',
        "event: ping\ndata: {}\n\n",
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      ]),
    );
    const client = createMessagesClient({ apiKey: "key-1", baseURL: `${url}/`, env: {} });
    const events = await collect(await client.stream({ model: "m", caf: "\u00e9" }, signal()));
    expect(events).toEqual([{ type: "message_start" }, { type: "message_stop" }]);
    expect(seen[0]?.url).toBe("/v1/messages");
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ model: "m", caf: "\u00e9", stream: true });
    expect(seen[0]?.headers).toMatchObject({
      "x-api-key": "key-1",
      "anthropic-version": "2023-06-01",
      "content-type": "application/json",
    });
    expect(seen[0]?.headers.authorization).toBeUndefined();
  });

  it("takes credentials, base URL and custom headers from the environment", async () => {
    const { url, seen } = await serve((_request, response) => streamReply(response, []));
    const env = {
      ANTHROPIC_AUTH_TOKEN: "token-2",
      ANTHROPIC_BASE_URL: `${url}/proxy`,
      ANTHROPIC_CUSTOM_HEADERS: "X-Team: blue\nx-trace:  on \nnot a header",
    };
    await collect(await createMessagesClient({ env }).stream({}, signal()));
    expect(seen[0]?.url).toBe("/proxy/v1/messages");
    expect(seen[0]?.headers).toMatchObject({
      authorization: "Bearer token-2",
      "x-team": "blue",
      "x-trace": "on",
    });
    expect(() => createMessagesClient({ env: {} })).toThrow(/Could not resolve authentication/);
    expect(() => createMessagesClient({ apiKey: "a", authToken: "b", env: {} })).toThrow(
      /at most one/,
    );
  });

  it("rejects an error status with the API's error, its status, type and headers", async () => {
    const { url } = await serve((request, response) => {
      if (request.url?.startsWith("/html")) {
        response.writeHead(502, { "content-type": "text/html" });
        response.end("<p>bad gateway</p>");
        return;
      }
      response.writeHead(429, { "retry-after": "7", "content-type": "application/json" });
      response.end('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}');
    });
    const failure = await createMessagesClient({ apiKey: "k", baseURL: url, env: {} })
      .stream({}, signal())
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    const error = failure as ApiError;
    expect([error.status, error.type, error.apiMessage, error.header("Retry-After")]).toEqual([
      429,
      "rate_limit_error",
      "slow down",
      "7",
    ]);
    const html = (await createMessagesClient({ apiKey: "k", baseURL: `${url}/html`, env: {} })
      .stream({}, signal())
      .catch((caught: unknown) => caught)) as ApiError;
    expect([html.status, html.type, html.message]).toEqual([
      502,
      undefined,
      "502 <p>bad gateway</p>",
    ]);
  });

  it("throws an error event inside the stream as an ApiError without a status", async () => {
    const { url } = await serve((_request, response) =>
      streamReply(response, [
        'event: message_start\ndata: {"type":"message_start"}\n\n',
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      ]),
    );
    const events = await createMessagesClient({ apiKey: "k", baseURL: url, env: {} }).stream(
      {},
      signal(),
    );
    const seen: unknown[] = [];
    const failure = await (async () => {
      for await (const event of events) seen.push(event);
    })().catch((error: unknown) => error as ApiError);
    expect(seen).toEqual([{ type: "message_start" }]);
    expect(failure).toBeInstanceOf(ApiError);
    expect([failure?.status, failure?.type, failure?.apiMessage]).toEqual([
      undefined,
      "overloaded_error",
      "Overloaded",
    ]);
  });

  it("sends a request again, once, when a kept-alive connection was closed under it", async () => {
    // The second request on the first connection meets a reset, as when a server's keep-alive
    // timeout closes an idle connection just as the client reuses it; a new connection answers.
    const connections = new Map<unknown, number>();
    let resets = 0;
    const { url, seen } = await serve((request, response) => {
      const count = (connections.get(request.socket) ?? 0) + 1;
      connections.set(request.socket, count);
      if (connections.size === 1 && count === 2) {
        resets += 1;
        request.socket.destroy();
        return;
      }
      streamReply(response, [`event: n\ndata: ${connections.size}.${count}\n\n`]);
    });
    const client = createMessagesClient({ apiKey: "k", baseURL: url, env: {} });
    expect(await collect(await client.stream({}, signal()))).toEqual([1.1]);
    expect(await collect(await client.stream({}, signal()))).toEqual([2.1]);
    expect([resets, seen.length]).toEqual([1, 3]);
  });

  it("rejects a refused connection with the socket's error, over https too", async () => {
    const { url } = await serve(() => {});
    const refused = url.replace(/:\d+$/, ":1");
    for (const baseURL of [refused, refused.replace("http:", "https:")]) {
      const failure = (await createMessagesClient({ apiKey: "k", baseURL, env: {} })
        .stream({}, signal())
        .catch((error: unknown) => error)) as NodeJS.ErrnoException;
      expect(failure.code).toBe("ECONNREFUSED");
    }
  });

  it("aborts before sending, while waiting, and while streaming, with an AbortError", async () => {
    const { url, seen } = await serve((request, response) => {
      if (request.url === "/wait/v1/messages") return;
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write('event: message_start\ndata: {"type":"message_start"}\n\n');
    });
    const before = new AbortController();
    before.abort();
    const client = (baseURL: string) => createMessagesClient({ apiKey: "k", baseURL, env: {} });
    await expect(client(url).stream({}, before.signal)).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(seen).toHaveLength(0);

    const waiting = new AbortController();
    const pending = client(`${url}/wait`).stream({}, waiting.signal);
    while (seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
    waiting.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });

    const streaming = new AbortController();
    const events = await client(url).stream({}, streaming.signal);
    const reading = (async () => {
      for await (const _event of events) streaming.abort();
    })();
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
  });

  it("gives up on an answer that does not start within the timeout", async () => {
    const { url } = await serve(() => {});
    const client = createMessagesClient({ apiKey: "k", baseURL: url, timeoutMs: 50, env: {} });
    await expect(client.stream({}, signal())).rejects.toThrow("Request timed out.");
  });

  it("sends through a given fetch instead, with the same answers", async () => {
    const { url, seen } = await serve((_request, response) =>
      streamReply(response, ['event: message_stop\ndata: {"type":"message_stop"}\n\n']),
    );
    const client = createMessagesClient({ apiKey: "k", baseURL: url, fetch, env: {} });
    expect(await collect(await client.stream({ a: 1 }, signal()))).toEqual([
      { type: "message_stop" },
    ]);
    expect(seen[0]?.headers["x-api-key"]).toBe("k");
  });
});
