/**
 * A `rudder serve` killed with SIGKILL while its agent runs a tool: the agent and the tool end
 * too, for rudder and for the real Claude Code (`--engine claude`). The gateway cannot stop
 * them itself (each agent is in a process group of its own): its agent spawner, seeing it gone,
 * ends each agent's group (SIGTERM, then SIGKILL), and the kernel's parent-death signal (SIGTERM,
 * set through util-linux's setpriv) reaches each agent when the spawner goes. What the
 * turn spent before the kill (its first model call) is still counted once the gateway is back.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SpendReport } from "../../src/gateway/budgets/spend-report.js";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { processesMatching } from "../helpers/process-scan.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startEngineWorker } from "./serve-worker.js";

let root: string;
const running: RudderRun[] = [];
const apis: FakeMessagesApi[] = [];
/** What a failed run leaves: killed at the end, by pid. */
const leftovers: number[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-agent-death-"));
});

afterAll(async () => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone, as it should be.
    }
  }
  for (const run of running) await stopRudder(run);
  for (const api of apis) await api.close();
  rmSync(root, { recursive: true, force: true });
});

describe.runIf(existsSync("/usr/bin/setpriv"))("a gateway SIGKILLed mid-tool", () => {
  it.each(["rudder", "claude"] as const)(
    "leaves neither its %s agent nor the agent's tool running",
    async (engine) => {
      // A command no other test runs, so the scan finds this tool only.
      const tool = `sleep 61.${engine === "claude" ? "234" : "567"}`;
      const api = await startFakeMessagesApi({
        script: [
          { toolUse: { name: "Bash", input: { command: `exec ${tool}` } } },
          { hangUntilAborted: true, text: "not reached" },
        ],
      });
      apis.push(api);
      const gateway = await startEngineWorker(join(root, engine), engine, api.url, running);
      await gateway.api("POST", "/api/channels/tools/messages", { text: "run the command" });
      // The agent asks before its Bash call: allowed through the API, as a person would.
      const tools = await waitFor(
        async () => {
          const { requests } = await gateway.api<{ requests: Array<{ id: string }> }>(
            "GET",
            "/api/channels/tools/permissions",
          );
          for (const request of requests) {
            await gateway.api("POST", `/api/channels/tools/permissions/${request.id}`, {
              decision: "allow",
            });
          }
          const found = processesMatching(tool);
          return found.length > 0 ? found : undefined;
        },
        "the tool running",
        60_000,
      );
      const { runners } = await gateway.api<{ runners: Array<{ pid: number | null }> }>(
        "GET",
        "/api/runners",
      );
      const agents = runners.flatMap((runner) => (runner.pid === null ? [] : [runner.pid]));
      expect(agents).toHaveLength(1);
      leftovers.push(...agents, ...tools);
      expect([...agents, ...tools].every(isAlive)).toBe(true);

      // The turn's spend so far (the call that asked for the tool) is stored as it happened.
      const store = new Database(join(root, engine, "data", "gateway.db"), { readonly: true });
      const entry = await waitFor(
        () =>
          store.prepare("SELECT input_tokens + output_tokens AS tokens FROM spend_entries").get() as
            | { tokens: number }
            | undefined,
        "the running turn's spend stored",
      );
      store.close();
      expect(entry.tokens).toBeGreaterThan(0);

      gateway.run.kill();
      await gateway.run.exited;
      await waitFor(
        () => [...agents, ...tools].every((pid) => !isAlive(pid)),
        "the agent and its tool gone",
        10_000,
      );
      // Back (the message replayed, its new call hanging): the spend before the kill counts.
      const again = await startEngineWorker(join(root, engine), engine, api.url, running);
      const spend = await again.api<SpendReport>("GET", "/api/spend");
      expect(spend.gateway.today.tokens).toBe(entry.tokens);
    },
    120_000,
  );
});
