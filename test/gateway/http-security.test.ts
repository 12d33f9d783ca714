import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./helpers.js";
import { rawRequest } from "./raw-http.js";

describe("the gateway's Host, Origin and token-in-URL checks", () => {
  let gateway: TestGateway;
  let port: number;

  beforeAll(async () => {
    gateway = await startTestGateway({
      prefix: "security",
      allowedHosts: ["rudder.example.com", "proxy.example.com:8443"],
    });
    port = Number(new URL(gateway.url).port);
  });
  afterAll(async () => {
    await gateway.cleanup();
  });

  const get = (path: string, host: string, extra: string[] = []) =>
    rawRequest(port, [`GET ${path} HTTP/1.1`, `Host: ${host}`, ...extra].join("\r\n"));

  it("serves the loopback names on its port and the allowed hosts, and refuses others", async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      "rudder.example.com",
      "rudder.example.com:9000",
      "proxy.example.com:8443",
    ]) {
      expect((await get("/api/health", host)).status, host).toBe(200);
    }
    for (const host of [
      `evil.example.com:${port}`,
      "evil.example.com",
      `127.0.0.1:${port + 1}`,
      `localhost.evil.example.com:${port}`,
      "proxy.example.com:8444",
      "proxy.example.com",
    ]) {
      for (const path of ["/", "/api/health", "/api/channels"]) {
        const answer = await get(path, host, [`Authorization: Bearer ${gateway.token}`]);
        expect(answer.status, `${host} ${path}`).toBe(421);
        expect(answer.text).toContain("is not one this gateway serves");
      }
    }
    const noHost = await rawRequest(port, "GET /api/health HTTP/1.0");
    expect([400, 421]).toContain(noHost.status);
  });

  it("refuses a state-changing request from another origin with 403", async () => {
    const own = `127.0.0.1:${port}`;
    const send = (method: string, path: string, origin: string) =>
      rawRequest(
        port,
        [
          `${method} ${path} HTTP/1.1`,
          `Host: ${own}`,
          `Origin: ${origin}`,
          `Authorization: Bearer ${gateway.token}`,
          "Content-Type: application/json",
        ].join("\r\n"),
        method === "DELETE" ? "" : JSON.stringify({ text: "" }),
      );
    for (const origin of ["http://evil.example.com", "null", `http://localhost:${port}`, "x"]) {
      for (const [method, path] of [
        ["POST", "/api/channels/a/messages"],
        ["DELETE", "/api/schedules/x"],
        ["PUT", "/api/schedules"],
        ["PATCH", "/api/schedules"],
      ] as const) {
        const answer = await send(method, path, origin);
        expect(answer.status, `${method} ${path} from ${origin}`).toBe(403);
        expect(answer.text).toContain("cross-origin");
      }
    }
    // The gateway's own origin passes the check (and then meets the empty text's 400).
    expect((await send("POST", "/api/channels/a/messages", `http://${own}`)).status).toBe(400);
    // Reads are not refused for their Origin: the browser keeps the answer from the other site.
    const read = await get("/api/health", own, ["Origin: http://evil.example.com"]);
    expect(read.status).toBe(200);
    expect(read.text.toLowerCase()).not.toContain("access-control-allow-origin");
  });

  it("takes ?token= on the event stream only, and answers 401 elsewhere", async () => {
    const refused = await fetch(`${gateway.url}/api/channels?token=${gateway.token}`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toContain(
      "?token= is accepted only on GET /api/channels/:id/events",
    );
    const post = await fetch(`${gateway.url}/api/channels/a/messages?token=${gateway.token}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "hi" }),
    });
    expect(post.status).toBe(401);
    const stream = await fetch(`${gateway.url}/api/channels/a/events?token=${gateway.token}`);
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
    const wrong = await fetch(`${gateway.url}/api/channels/a/events?token=nope`);
    expect(wrong.status).toBe(401);
    expect((await gateway.messages("a")).length).toBe(0);
  });
});
