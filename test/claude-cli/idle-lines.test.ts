/**
 * A rudder child wakes itself when a background task ends after its turn;
 * ClaudeProcess hands those lines to `onIdleLine` instead of dropping them
 * or giving them to the next turn.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { ClaudeProcess } from "../../src/claude-cli/claude-process.js";
import { echoFallback, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";

const workspace = mkdtempSync(join(tmpdir(), "rudder-idle-"));

afterAll(() => {
  rmSync(workspace, { recursive: true, force: true });
});

it("reports the wake-up turn of a background task through onIdleLine", async () => {
  const api = await startFakeMessagesApi({
    script: [
      {
        toolUse: {
          name: "Bash",
          input: { command: "sleep 0.5; printf bg-finished", run_in_background: true },
        },
      },
      { text: "started it" },
      { text: "the task finished" },
      { text: "second answer" },
    ],
    fallback: echoFallback,
  });
  const idle: Array<Record<string, unknown>> = [];
  let sawIdleResult: () => void = () => {};
  const idleResult = new Promise<void>((resolve) => {
    sawIdleResult = resolve;
  });
  const proc = new ClaudeProcess("idle", {
    claudeBin: process.execPath,
    binArgs: [RUDDER_CLI, "run"],
    cwd: workspace,
    env: { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "dummy" },
    onIdleLine: (line) => {
      idle.push(line);
      if (line.type === "result") sawIdleResult();
    },
  });
  try {
    const first = await proc.runTurn("start a task", { timeoutMs: 60_000 });
    expect(first.result).toBe("started it");
    await idleResult;
    const text = JSON.stringify(idle);
    expect(text).toContain("task_notification");
    expect(text).toContain("the task finished");
    const woken = JSON.stringify(api.mainRequests()[2]?.body.messages);
    expect(woken).toContain("bg-finished");

    const second = await proc.runTurn("again", { timeoutMs: 60_000 });
    expect(second.result).toBe("second answer");
  } finally {
    await proc.stop();
    await api.close();
  }
});
