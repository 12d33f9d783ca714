/**
 * ClaudeProcess driving `rudder run` instead of Claude Code: the same stream-json dialect, so
 * steering, lifecycle tracking and results work unchanged (ARCHITECTURE decision 1).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { ClaudeProcess } from "../../src/claude-cli/claude-process.js";
import {
  echoFallback,
  lastToolResults,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";

const workspace = mkdtempSync(join(tmpdir(), "rudder-child-"));

afterAll(() => {
  rmSync(workspace, { recursive: true, force: true });
});

it("steers a rudder child during a tool run into the same turn", async () => {
  const api = await startFakeMessagesApi({
    script: [
      { toolUse: { name: "Bash", input: { command: "sleep 1" } } },
      {
        reply: (request) => ({
          text: JSON.stringify(request.body.messages.at(-1)).includes("and the steer")
            ? "answered the steer"
            : `missed it: ${JSON.stringify(lastToolResults(request))}`,
        }),
      },
    ],
    fallback: echoFallback,
  });
  const proc = new ClaudeProcess("rudder-child", {
    claudeBin: process.execPath,
    binArgs: [RUDDER_CLI, "run"],
    cwd: workspace,
    permissionMode: "bypassPermissions",
    env: { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "dummy" },
  });
  try {
    let steered: Promise<unknown> | undefined;
    const result = await proc.runTurn("start", {
      timeoutMs: 60_000,
      onEvent: (event) => {
        if (event.type === "assistant" && JSON.stringify(event).includes('"tool_use"')) {
          steered ??= proc.steer("and the steer");
        }
      },
    });
    expect(await steered).toEqual({ status: "steered", turn: undefined });
    expect(result.isError).toBe(false);
    expect(result.result).toBe("answered the steer");
    expect(result.numTurns).toBe(2);
    expect(proc.sessionId).toBeTruthy();
  } finally {
    await proc.stop();
    await api.close();
  }
});
