import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { ApiConnectionError, ApiError } from "../../src/model/api-error.js";
import { API_VERSION, createMessagesClient } from "../../src/model/messages-client.js";
import { startFakeMessagesApi } from "../fixtures/fake-messages-api.js";

const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

interface Seen {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A loopback server whose answer the test writes; resolves to its URL. */
async function server(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const http: Server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      seen.push({ path: request.url ?? "", headers: request.headers, body });
      answer(request, response);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  );
  const address = http.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, seen };
}

function streamAnswer(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  response.end(
    'event: message_start\ndata: {"type":"message_start"}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  );
}

async function collect(items: AsyncIterable<unknown>): Promise<unknown[]> {
  const all: unknown[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const signal = () => new AbortController().signal;

describe("createMessagesClient", () => {
  it("posts the body with the SDK's headers to <base>/v1/messages and yields the events", async () => {
    const { url, seen } = await server((_request, response) => streamAnswer(response));
    const client = createMessagesClient({
      apiKey: "key-1",
      baseURL: `${url}/proxy/`,
      env: { ANTHROPIC_CUSTOM_HEADERS: "X-Team: blue\nbroken line\nx-empty:" },
    });
    const events = await collect(await client.stream({ model: "m", stream: true }, signal()));
    expect(events).toEqual([{ type: "message_start" }, { type: "message_stop" }]);
    expect(seen[0]?.path).toBe("/proxy/v1/messages");
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ model: "m", stream: true });
    expect(seen[0]?.headers).toMatchObject({
      authorization: "Bearer key-1",
      "anthropic-version": API_VERSION,
      "content-type": "application/json",
      "x-team": "blue",
      "x-empty": "",
    });
  });

  it("takes the credential and base URL from the environment when none is given", async () => {
    const { url, seen } = await server((_request, response) => streamAnswer(response));
    const client = createMessagesClient({
      env: { ANTHROPIC_AUTH_TOKEN: "token-2", ANTHROPIC_BASE_URL: url },
    });
    await collect(await client.stream({}, signal()));
    expect(seen[0]?.headers.authorization).toBe("Bearer token-2");
    expect(() => createMessagesClient({ env: {} })).toThrow(/authentication/);
    expect(() => createMessagesClient({ apiKey: "a", authToken: "b", env: {} })).toThrow(
      /at most one/,
    );
  });

  it("rejects an error status with an ApiError carrying the body's type, message and headers", async () => {
    const { url } = await server((request, response) => {
      if (request.url?.includes("json")) {
        response.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
        response.end('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}');
      } else {
        response.writeHead(502, { "content-type": "text/html" });
        response.end("<html>Bad Gateway</html>\n");
      }
    });
    const json = createMessagesClient({ apiKey: "k", baseURL: `${url}/json`, env: {} });
    const rateLimited = await json.stream({}, signal()).catch((error: unknown) => error);
    expect(rateLimited).toBeInstanceOf(ApiError);
    expect(rateLimited).toMatchObject({
      status: 429,
      type: "rate_limit_error",
      detail: "slow down",
    });
    expect((rateLimited as ApiError).header("Retry-After")).toBe("7");

    const html = createMessagesClient({ apiKey: "k", baseURL: `${url}/html`, env: {} });
    const badGateway = await html.stream({}, signal()).catch((error: unknown) => error);
    expect(badGateway).toMatchObject({
      status: 502,
      type: undefined,
      detail: "<html>Bad Gateway</html>",
    });
  });

  it("gives up on a response that does not start within the timeout", async () => {
    const { url } = await server(() => {});
    const client = createMessagesClient({ apiKey: "k", baseURL: url, timeoutMs: 50, env: {} });
    const failure = await client.stream({}, signal()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiConnectionError);
    expect((failure as Error).message).toBe("Request timed out.");
  });

  it("stops a request in flight when aborted", async () => {
    const { url } = await server(() => {});
    const client = createMessagesClient({ apiKey: "k", baseURL: url, env: {} });
    const controller = new AbortController();
    const pending = client.stream({}, controller.signal).catch((error: unknown) => error);
    controller.abort();
    expect((await pending) as Error).toMatchObject({ name: "AbortError" });
  });

  it("sends through a given fetch instead of node:http", async () => {
    const api = await startFakeMessagesApi({ script: [{ text: "héllo wörld", chunks: 4 }] });
    closers.push(() => api.close());
    const urls: string[] = [];
    const client = createMessagesClient({
      apiKey: "k",
      baseURL: api.url,
      env: {},
      fetch: (input, init) => {
        urls.push(String(input));
        return fetch(input, init);
      },
    });
    const events = (await collect(
      await client.stream(
        { model: "m", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] },
        signal(),
      ),
    )) as Array<{ type: string; delta?: { text?: string } }>;
    expect(urls).toEqual([`${api.url}/v1/messages`]);
    expect(events.at(-1)?.type).toBe("message_stop");
    const text = events.map((event) => event.delta?.text ?? "").join("");
    expect(text).toBe("héllo wörld");
  });
});
