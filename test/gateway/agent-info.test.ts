/**
 * `GET /api/info` says what the agents are ({cwd, engine, model, sandbox}) to a client with
 * the token, and nothing without it; `GET /api/health` stays free of paths.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./helpers.js";

describe("GET /api/info", () => {
  let given: TestGateway;
  let defaulted: TestGateway;

  beforeAll(async () => {
    given = await startTestGateway({
      prefix: "info",
      engineName: "rudder",
      info: { cwd: "/work/some project", engine: "rudder", model: "demo", sandbox: true },
    });
    defaulted = await startTestGateway({ prefix: "info-default" });
  });
  afterAll(async () => {
    await given.cleanup();
    await defaulted.cleanup();
  });

  it("needs the token", async () => {
    const response = await fetch(`${given.url}/api/info`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "missing or wrong bearer token" });
  });

  it("answers the folder, engine, model and sandbox it was given, with those fields only", async () => {
    const { status, body } = await given.api("GET", "/api/info");
    expect(status).toBe(200);
    expect(body).toEqual({
      cwd: "/work/some project",
      engine: "rudder",
      model: "demo",
      sandbox: true,
    });
  });

  it("defaults to the gateway's folder, its engine's name and model, and no sandbox", async () => {
    const { status, body } = await defaulted.api("GET", "/api/info");
    expect(status).toBe(200);
    expect(body).toEqual({
      cwd: process.cwd(),
      engine: "claude",
      model: "default",
      sandbox: false,
    });
  });

  it("keeps the folder out of the open health", async () => {
    const text = await (await fetch(`${given.url}/api/health`)).text();
    expect(text).not.toContain("some project");
    expect(JSON.parse(text)).not.toHaveProperty("cwd");
  });
});
