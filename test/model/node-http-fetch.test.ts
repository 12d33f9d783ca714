import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { nodeHttpFetch } from "../../src/model/node-http-fetch.js";

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("nodeHttpFetch, the SDK's transport", () => {
  it("sends method, headers and body, and streams the response back", async () => {
    const url = await serve((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        response.writeHead(201, {
          "x-echo": request.headers["x-test"] ?? "",
          "set-cookie": ["a=1", "b=2"],
        });
        response.write(`${request.method} `);
        setTimeout(() => response.end(body), 20);
      });
    });
    const response = await nodeHttpFetch(`${url}/v1/messages`, {
      method: "POST",
      headers: { "x-test": "yes", "content-type": "application/json" },
      body: JSON.stringify({ caf: "\u00e9" }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-echo")).toBe("yes");
    expect(response.headers.get("set-cookie")).toBe("a=1, b=2");
    expect(await response.text()).toBe('POST {"caf":"\u00e9"}');
  });

  it("sends a request again, once, when a kept-alive connection was closed under it", async () => {
    // The second request on the first connection meets a reset, as when a server's keep-alive
    // timeout closes an idle connection just as the client reuses it; a new connection answers.
    const seen = new Map<unknown, number>();
    let resets = 0;
    const url = await serve((request, response) => {
      const count = (seen.get(request.socket) ?? 0) + 1;
      seen.set(request.socket, count);
      if (seen.size === 1 && count === 2) {
        resets += 1;
        request.socket.destroy();
        return;
      }
      response.end(`answer ${seen.size}.${count}`);
    });
    expect(await (await nodeHttpFetch(`${url}/a`)).text()).toBe("answer 1.1");
    expect(await (await nodeHttpFetch(`${url}/b`)).text()).toBe("answer 2.1");
    expect(resets).toBe(1);
  });

  it("rejects a refused connection as fetch does, with the socket error as cause", async () => {
    const url = await serve(() => {});
    const refused = url.replace(/:\d+$/, ":1");
    const failure = await nodeHttpFetch(refused).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(((failure as TypeError).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
    const overTls = await nodeHttpFetch(refused.replace("http:", "https:")).catch(
      (error: unknown) => error,
    );
    expect(((overTls as TypeError).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });

  it("aborts a request in flight with an AbortError", async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200);
      response.write("partial");
    });
    const controller = new AbortController();
    const response = await nodeHttpFetch(url, { signal: controller.signal });
    const reading = response.text().catch((error: unknown) => error);
    controller.abort();
    const failure = await reading;
    expect((failure as Error).name).toBe("AbortError");
    const before = new AbortController();
    before.abort();
    await expect(nodeHttpFetch(url, { signal: before.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
  });

  it("rejects with an AbortError when aborted while the request is being prepared", async () => {
    let requests = 0;
    const url = await serve(() => {
      requests += 1;
    });
    const controller = new AbortController();
    // The call runs up to its first await (reading the body) and returns; the abort lands there.
    const pending = nodeHttpFetch(url, { method: "POST", body: "x", signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(requests).toBe(0);
  }, 5000);

  it("answers as a Response: ok, url, json, one read only, clone", async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"hello":"w\u00f6rld"}');
    });
    const response = await nodeHttpFetch(`${url}/v1/models`);
    expect(response.ok).toBe(true);
    expect(response.url).toBe(`${url}/v1/models`);
    const copy = response.clone();
    expect(response.bodyUsed).toBe(false);
    expect(await response.json()).toEqual({ hello: "w\u00f6rld" });
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
    expect(() => response.clone()).toThrow(TypeError);
    expect(new TextDecoder().decode(await copy.arrayBuffer())).toBe('{"hello":"w\u00f6rld"}');
    expect(copy.headers.get("Content-Type")).toBe("application/json");
  });

  it("gives a 204 no body, and a failed status ok false", async () => {
    const url = await serve((request, response) => {
      response.writeHead(request.url === "/empty" ? 204 : 503, "Busy");
      response.end(request.url === "/empty" ? undefined : "later");
    });
    const empty = await nodeHttpFetch(`${url}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    expect(await empty.text()).toBe("");
    const failed = await nodeHttpFetch(`${url}/busy`);
    expect(failed.ok).toBe(false);
    expect(failed.statusText).toBe("Busy");
    expect(await failed.text()).toBe("later");
  });
});
