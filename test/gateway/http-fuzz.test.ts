import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./helpers.js";
import { rawRequest } from "./raw-http.js";

/** Every route the app declares, read from its source so that a new route is fuzzed too. */
function declaredRoutes(): Array<{ method: string; path: string }> {
  const source = readFileSync(join(import.meta.dirname, "../../src/gateway/http-app.ts"), "utf8");
  const routes = [...source.matchAll(/app\.(get|post|put|patch|delete)\(\s*"([^"]+)"/g)].map(
    (match) => ({ method: match[1]!.toUpperCase(), path: match[2]! }),
  );
  return [...routes, { method: "GET", path: "/" }, { method: "GET", path: "/assets/:file" }];
}

const badSegments = [
  "%",
  "%zz",
  "%E0%A4%A",
  "%c0%ae%c0%ae",
  "%00",
  "..%2f..%2fetc%2fpasswd",
  "%ff%fe",
  "a".repeat(4000),
  "\u00e9",
];

const badBodies: string[] = [
  "",
  "{",
  "null",
  "[]",
  "42",
  '"text"',
  '{"text":5}',
  '{"text":null}',
  '{"text":["a"]}',
  '{"text":""}',
  '{"decision":1}',
  '{"decision":"maybe","message":7}',
  '{"cron":5,"channel":{},"prompt":[]}',
  '{"cron":"* * * * * * *","channel":"a","prompt":"p"}',
  '{"cron":"0 0 31 2 *","channel":"a","prompt":"p"}',
  '{"cron":"not a cron","channel":"a","prompt":"p"}',
  '{"cron":"0 0 1 1 *","channel":"../x","prompt":"p"}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{}}}',
  "[".repeat(20_000),
  `{"text":"${"x".repeat(1024 * 1024 + 10)}"}`,
];

const oddMethods = ["PUT", "PATCH", "OPTIONS", "HEAD", "TRACE", "DELETE", "POST", "GET"];

function concrete(path: string, segment = "fuzz"): string {
  return path.replace(/:[A-Za-z]+/g, segment);
}

describe("an HTTP fuzz of every route", () => {
  let gateway: TestGateway;
  let port: number;

  beforeAll(async () => {
    gateway = await startTestGateway({ prefix: "fuzz" });
    port = Number(new URL(gateway.url).port);
  });
  afterAll(async () => {
    await gateway.cleanup();
  });

  const send = (method: string, path: string, body: string | Buffer = "", auth = true) =>
    rawRequest(
      port,
      [
        `${method} ${path} HTTP/1.1`,
        `Host: ${new URL(gateway.url).host}`,
        ...(auth ? [`Authorization: Bearer ${gateway.token}`] : []),
        ...(body === "" ? [] : ["Content-Type: application/json"]),
      ].join("\r\n"),
      body,
    );

  it("answers the malformed URLs of the report with 400", async () => {
    for (const path of ["/%", "/%zz", "/%E0%A4%A", "/%c0%ae%c0%ae/etc/passwd", "/api/%"]) {
      const answer = await send("GET", path);
      expect(answer.status, path).toBe(400);
      expect(answer.text).toContain("malformed percent-encoding");
    }
  });

  it("answers no request with 5xx: bad paths, bodies, types, sizes and methods", async () => {
    const routes = declaredRoutes();
    expect(routes.length).toBeGreaterThan(10);
    const failures: string[] = [];
    let requests = 0;
    const check = async (method: string, path: string, body?: string | Buffer, auth = true) => {
      requests += 1;
      const answer = await send(method, path, body, auth);
      const label = `${method} ${path.slice(0, 80)} body ${String(body ?? "").slice(0, 40)}`;
      if (answer.status >= 500 || answer.status === 0) failures.push(`${answer.status} ${label}`);
    };
    for (const route of routes) {
      for (const segment of badSegments) {
        if (route.path.includes(":")) await check(route.method, concrete(route.path, segment));
        await check(route.method, `${concrete(route.path)}/${segment}`);
        await check(route.method, `${concrete(route.path)}?limit=${segment}&token=${segment}`);
      }
      for (const method of oddMethods) await check(method, concrete(route.path));
      await check(route.method, concrete(route.path), undefined, false);
      if (route.method === "GET") continue;
      for (const body of badBodies) await check(route.method, concrete(route.path), body);
      await check(route.method, concrete(route.path), Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    }
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(500);
    const health = await fetch(`${gateway.url}/api/health`);
    expect(health.status).toBe(200);
  });
});
