import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./helpers.js";
import { fuzzEveryRoute } from "./http-fuzz-cases.js";
import { rawRequest } from "./raw-http.js";

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
    const report = await fuzzEveryRoute(gateway.url, gateway.token);
    expect(report.routes).toBeGreaterThan(10);
    expect(report.failures).toEqual([]);
    expect(report.requests).toBeGreaterThan(500);
    const health = await fetch(`${gateway.url}/api/health`);
    expect(health.status).toBe(200);
  });
});
