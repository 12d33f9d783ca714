/**
 * Hooks and MCP servers run unconfined, as configured, but owned: when the
 * agent process is SIGKILLed mid-hook or mid-MCP-call, no process of theirs
 * is left (zombies count as dead), and nothing they meant to do later happens.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_MCP_SERVER } from "../helpers/fixtures.js";
import { processesMatching } from "../helpers/process-scan.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import { readPids } from "../mcp/mcp-helpers.js";
import { rudderFixture } from "./rudder-fixture.js";

const fixture = rudderFixture("rudder-owned-");
const { rudder } = fixture;
const leftovers: number[] = [];

afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone, as it should be.
    }
  }
});

describe("hooks and MCP servers die with the agent", () => {
  it("a hook running when the agent is SIGKILLed is killed with its whole group", async () => {
    const marker = join(fixture.workspace, "hook.started");
    const late = join(fixture.workspace, "hook-late.txt");
    const settings = join(fixture.root, "settings.json");
    writeFileSync(
      settings,
      JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              hooks: [
                {
                  type: "command",
                  command: `touch ${marker}; sleep 97.81 & sleep 97.82; echo late > ${late}`,
                },
              ],
            },
          ],
        },
      }),
    );
    fixture.api.push({ toolUse: [{ name: "bash", input: { command: "echo hi" } }] });
    const run = rudder(["run", "--settings", settings, "say hi"]);
    await waitFor(
      () =>
        existsSync(marker) &&
        processesMatching("sleep 97.81").length > 0 &&
        processesMatching("sleep 97.82").length > 0,
      "the marker and both sleeps",
      20_000,
    );
    leftovers.push(...processesMatching("sleep 97.8"));
    run.child.kill("SIGKILL");
    expect((await run.exited).signal).toBe("SIGKILL");
    await waitFor(
      () => processesMatching("sleep 97.8").length === 0,
      "the sleep to be gone",
      10_000,
    );
    expect(existsSync(late)).toBe(false);
  });

  it("an MCP server mid-call when the agent is SIGKILLed is killed, its grandchild too", async () => {
    const pidFile = join(fixture.root, "server.pids");
    const callLog = join(fixture.root, "calls.log");
    const config = {
      mcpServers: {
        fake: {
          command: process.execPath,
          args: [FAKE_MCP_SERVER, "--pid-file", pidFile, "--call-log", callLog, "--grandchild"],
        },
      },
    };
    fixture.api.push({ toolUse: [{ name: "mcp__fake__hang", input: {} }] });
    const run = rudder([
      "run",
      "--mcp-config",
      JSON.stringify(config),
      "--allowedTools",
      "mcp__fake",
      "call it",
    ]);
    await waitFor(
      () => existsSync(callLog) && readFileSync(callLog, "utf8").includes("hang"),
      "the hanging call",
      20_000,
    );
    const pids = readPids(pidFile);
    leftovers.push(...pids);
    expect(pids.length).toBe(2);
    expect(pids.every(isAlive)).toBe(true);
    run.child.kill("SIGKILL");
    expect((await run.exited).signal).toBe("SIGKILL");
    await waitFor(() => !pids.some(isAlive), "the processes to be gone", 10_000);
  });
});
