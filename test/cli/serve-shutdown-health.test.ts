/**
 * `rudder serve` says it is shutting down from the SIGTERM on, while it still answers (here its
 * SQLite store up, an agent that ignores SIGTERM holding the shutdown open for its grace
 * period): `GET /api/health` is a 503 with `ok: false`, the reason and `Retry-After`, so a load
 * balancer sends clients elsewhere, and a message is refused with a 503 that has both too, so a
 * client sends it again. The PostgreSQL case (the worker named) is in serve-outage-shutdown.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startServeWorker } from "./serve-worker.js";

let root: string;
const running: RudderRun[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-shutdown-health-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "workspace"));
});

afterAll(async () => {
  for (const run of running) await stopRudder(run);
  // The agent's tool (a detached `sleep`), should the gateway have left it behind.
  if (existsSync(toolPidFile())) {
    const pid = Number(readFileSync(toolPidFile(), "utf8"));
    if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGKILL");
  }
  rmSync(root, { recursive: true, force: true });
});

const toolPidFile = () => join(root, "tool.pid");

describe("rudder serve shutting down", () => {
  it("answers health and messages with a 503 saying so, with Retry-After, until it exits", async () => {
    writeFileSync(join(root, "scenario"), "ignore_sigterm");
    const gateway = await startServeWorker(join(root, "data"), ["--engine", "claude"], {
      cwd: join(root, "workspace"),
      env: {
        PATH: process.env.PATH,
        HOME: join(root, "home"),
        RUDDER_CLAUDE_BIN: FAKE_CLAUDE_SWITCH,
        GATEWAY_TEST_SCENARIO_FILE: join(root, "scenario"),
        FAKE_CLAUDE_PID_FILE: toolPidFile(),
      },
      running,
    });
    expect((await fetch(`${gateway.url}/api/health`)).status).toBe(200);
    const posted = await gateway.api<{ disposition: string }>(
      "POST",
      "/api/channels/long/messages",
      { text: "run a long tool" },
    );
    expect(posted.disposition).toBe("started");
    // The agent writes its tool's pid once its turn runs, long after it began to ignore SIGTERM.
    await waitFor(() => existsSync(toolPidFile()), "the agent's turn to run its tool");

    // So the gateway's shutdown waits out the agent's grace (3 s) before it exits.
    gateway.run.child.kill("SIGTERM");
    const health = await waitFor(async () => {
      const answer = await fetch(`${gateway.url}/api/health`);
      return answer.status === 503 ? answer : undefined;
    }, "health to say the gateway is shutting down");
    expect(health.headers.get("retry-after")).toBe("1");
    expect(await health.json()).toMatchObject({
      ok: false,
      engine: "claude",
      error: "the gateway is shutting down; send again once it is back",
    });

    const refused = await fetch(`${gateway.url}/api/channels/long/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "one more" }),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toEqual({
      error: "the gateway is shutting down; send again once it is back",
    });
    // Both were answered while the shutdown ran, not by a gateway already gone.
    expect(gateway.run.child.exitCode).toBeNull();

    expect((await gateway.run.exited).code).toBe(0);
  });
});
