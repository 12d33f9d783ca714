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

  it("rejects a refused connection as fetch does, with the socket error as cause", async () => {
    const url = await serve(() => {});
    const refused = url.replace(/:\d+$/, ":1");
    const failure = await nodeHttpFetch(refused).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(((failure as TypeError).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
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
});
