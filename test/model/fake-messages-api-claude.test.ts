import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  type FakeMessagesApi,
  lastToolResults,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";

import { startProcess, stopProcess } from "../helpers/owned-process.js";

/** Installed by scripts/install-claude-code.sh, which `npm test` runs first. */
const CLAUDE = resolve(".cache/claude-code/node_modules/.bin/claude");

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs `claude -p` against the fake API and resolves with its stream-json lines. */
async function runClaude(
  script: ScriptStep[],
  prompt: string,
): Promise<{
  api: FakeMessagesApi;
  lines: Array<Record<string, unknown>>;
  code: number | null;
  errors: string;
}> {
  const api = await startFakeMessagesApi({ script });
  const home = mkdtempSync(join(tmpdir(), "rudder-claude-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  cleanups.push(() => api.close());
  const run = startProcess(
    CLAUDE,
    ["-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"],
    { cwd: home, env: claudeCodeEnv(home, api.url) },
  );
  cleanups.push(() => stopProcess(run, 2000));
  const { code } = await run.closed;
  const output = run.stdout();
  const errors = run.stderr();
  const lines = output
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { api, lines, code, errors };
}

describe.skipIf(!existsSync(CLAUDE))("fake Messages API with the real Claude Code CLI", () => {
  it("serves a tool call and a final answer that Claude Code accepts", async () => {
    const { api, lines, code, errors } = await runClaude(
      [
        { toolUse: { name: "Bash", input: { command: "echo fixture-ok", description: "echo" } } },
        { text: "All done." },
      ],
      "say something",
    );
    expect(code, errors).toBe(0);
    const result = lines.find((line) => line.type === "result");
    expect(result).toMatchObject({ is_error: false, result: "All done.", num_turns: 2 });
    const main = api.mainRequests();
    expect(main).toHaveLength(2);
    expect(main[0]?.url).toBe("/v1/messages?beta=true");
    expect(main[0]?.body.stream).toBe(true);
    const results = lastToolResults(main[1]!);
    expect(JSON.stringify(results)).toContain("fixture-ok");
  });

  it("makes Claude Code report a 429 as a rate-limited turn", async () => {
    const { lines } = await runClaude(
      [{ error: { status: 429, retryAfterSeconds: 0, message: "slow down" } }],
      "hi",
    );
    const result = lines.find((line) => line.type === "result");
    expect(result).toMatchObject({ is_error: true, api_error_status: 429 });
    expect(String(result?.result)).toContain("429");
  });
});
