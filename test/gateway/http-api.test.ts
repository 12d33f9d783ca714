import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEEP_ALIVE_MS } from "../../src/gateway/startup/listen-http.js";
import { startTestGateway, type TestGateway, testFolders } from "./helpers.js";

describe("the gateway's HTTP API", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      prefix: "http",
      demo: true,
      demoHint: "set ANTHROPIC_API_KEY",
    });
  });
  afterAll(async () => {
    await gateway.cleanup();
  });

  it("keeps the token alone in <data>/token, mode 0600", () => {
    const path = join(gateway.dataDir, "token");
    expect(readFileSync(path, "utf8").trim()).toBe(gateway.token);
    expect(gateway.token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(gateway.pageLink).toMatch(
      new RegExp(`^${gateway.url}/#code=[0-9a-z]+\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{32}$`),
    );
    expect(gateway.pageLink).not.toContain(gateway.token);
    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("answers health without a token, with the demo flag and hint", async () => {
    const response = await fetch(`${gateway.url}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ok: true,
      version: expect.any(String),
      engine: "claude",
      demo: true,
      hint: "set ANTHROPIC_API_KEY",
      store: { ok: true },
    });
  });

  it("keeps an idle connection open longer than a proxy keeps its own (nginx: 60 s)", async () => {
    const response = await fetch(`${gateway.url}/api/health`);
    await response.arrayBuffer();
    expect(response.headers.get("keep-alive")).toBe(`timeout=${KEEP_ALIVE_MS / 1000}`);
    expect(KEEP_ALIVE_MS).toBeGreaterThan(60_000);
  });

  it("refuses every other /api route without the bearer token", async () => {
    const routes: Array<[string, string]> = [
      ["GET", "/api/channels"],
      ["POST", "/api/channels/a/messages"],
      ["GET", "/api/channels/a/messages"],
      ["GET", "/api/channels/a/events"],
      ["GET", "/api/runners"],
      ["DELETE", "/api/runners/a"],
      ["GET", "/api/schedules"],
      ["POST", "/api/schedules"],
      ["DELETE", "/api/schedules/x"],
    ];
    for (const [method, path] of routes) {
      const response = await fetch(`${gateway.url}${path}`, { method });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(await response.json()).toEqual({ error: expect.any(String) });
    }
    const wrong = await fetch(`${gateway.url}/api/channels`, {
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.status).toBe(401);
    const query = await fetch(`${gateway.url}/api/channels?token=${gateway.token}`);
    expect(query.status).toBe(401);
  });

  it("answers 413 with JSON for a body over 1 MiB", async () => {
    const response = await fetch(`${gateway.url}/api/channels/big/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "x".repeat(1024 * 1024 + 10) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: expect.stringContaining("larger") });
    expect(await gateway.messages("big")).toEqual([]);
  });

  it("answers 400 with a JSON error for bad bodies and channel ids", async () => {
    const post = (path: string, body: string) =>
      fetch(`${gateway.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" },
        body,
      });
    const cases: Array<[string, string, string]> = [
      ["/api/channels/a/messages", "{not json", "valid JSON"],
      ["/api/channels/a/messages", "{}", "text is required"],
      ["/api/channels/a/messages", JSON.stringify({ text: 42 }), "text"],
      ["/api/channels/a/messages", JSON.stringify({ text: "" }), "empty"],
      ["/api/channels/a/messages", "[]", ""],
      ["/api/channels/bad%20id/messages", JSON.stringify({ text: "hi" }), "channel ids"],
      // Kept for the leases of chat sources (`source:<name>`).
      ["/api/channels/source:telegram/messages", JSON.stringify({ text: "hi" }), "source:"],
      [
        "/api/schedules",
        JSON.stringify({ cron: "* * * * *", channel: "source:x", prompt: "p" }),
        "not begin with source:",
      ],
      ["/api/schedules", JSON.stringify({ cron: "not a cron", channel: "c", prompt: "p" }), "cron"],
      ["/api/schedules", JSON.stringify({ cron: "* * * * *", channel: "c" }), "prompt is required"],
      [
        "/api/schedules",
        JSON.stringify({ cron: "* * * * * * *", channel: "c", prompt: "p" }),
        "it has 7 fields; it needs 5 (minute hour day month weekday), or 6 with seconds first",
      ],
      [
        "/api/schedules",
        JSON.stringify({ cron: "0 0 1", channel: "c", prompt: "p" }),
        "it has 3 fields",
      ],
      [
        "/api/schedules",
        JSON.stringify({ cron: "0 0 31 2 *", channel: "c", prompt: "p" }),
        'cron pattern "0 0 31 2 *" never fires: no date matches it',
      ],
    ];
    for (const [path, body, mention] of cases) {
      const response = await post(path, body);
      expect(response.status, `${path} ${body}`).toBe(400);
      const payload = (await response.json()) as { error: string };
      expect(payload.error).toContain(mention);
      expect(payload.error).not.toContain("    at ");
    }
    const { body } = await gateway.api<{ schedules: unknown[] }>("GET", "/api/schedules");
    expect(body.schedules).toEqual([]);
  });

  it("lists no messages for an unknown channel, and 404s unknown routes as JSON", async () => {
    expect(await gateway.api("GET", "/api/channels/never-used/messages")).toEqual({
      status: 200,
      body: { messages: [] },
    });
    expect(await gateway.api("GET", "/api/nothing-here")).toEqual({
      status: 404,
      body: { error: expect.any(String) },
    });
    expect((await gateway.api("DELETE", "/api/runners/nobody")).status).toBe(404);
    expect((await gateway.api("DELETE", "/api/schedules/nothing")).status).toBe(404);
  });
});

describe("the page", () => {
  it("is served from the web root with an index fallback, or says it is not built", async () => {
    const folders = testFolders("page");
    const webRoot = join(folders.dataDir, "..", "web");
    mkdirSync(join(webRoot, "assets"), { recursive: true });
    writeFileSync(join(webRoot, "index.html"), "<html>the page</html>");
    writeFileSync(join(webRoot, "assets", "app.js"), "console.log(1)");
    const built = await startTestGateway({ prefix: "page", webRoot });
    const missing = await startTestGateway({ prefix: "nopage", webRoot: join(webRoot, "nowhere") });
    try {
      const index = await fetch(`${built.url}/`);
      expect(index.headers.get("content-type")).toContain("text/html");
      expect(await index.text()).toBe("<html>the page</html>");
      expect(await (await fetch(`${built.url}/channels/a`)).text()).toBe("<html>the page</html>");
      const script = await fetch(`${built.url}/assets/app.js`);
      expect(script.headers.get("content-type")).toContain("javascript");
      expect(await (await fetch(`${built.url}/..%2f..%2fetc/passwd`)).text()).toBe(
        "<html>the page</html>",
      );
      const placeholder = await fetch(`${missing.url}/`);
      expect(placeholder.status).toBe(200);
      expect(await placeholder.text()).toContain("not built");
    } finally {
      await built.cleanup();
      await missing.cleanup();
      folders.remove();
    }
  });
});
