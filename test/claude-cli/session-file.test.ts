/**
 * `claudeSessionFile` names the file the real Claude Code CLI (2.1.328, against the fake
 * Messages API) writes a session to: for a working folder with spaces and dots, for one longer
 * than Claude Code's 200-character folder names (cut and hashed), and under
 * `CLAUDE_CODE_PROJECT_DIR_NAME`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeSessionFile } from "../../src/claude-cli/session-file.js";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  echoFallback,
  type FakeMessagesApi,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { CLAUDE_CODE_BIN } from "../helpers/one-shot-engine.js";
import { runProcess } from "../helpers/owned-process.js";

let root: string;
let api: FakeMessagesApi;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-claude-file-"));
  api = await startFakeMessagesApi({ fallback: echoFallback });
});
afterAll(async () => {
  await api?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Runs one `claude -p` turn in `cwd`; resolves with the session id it reports. */
async function claudeTurn(cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const run = await runProcess(CLAUDE_CODE_BIN, ["-p", "hello", "--output-format", "json"], {
    cwd,
    env,
  });
  try {
    return (JSON.parse(run.stdout) as { session_id: string }).session_id;
  } catch {
    throw new Error(`claude exited ${run.code}: ${run.stderr}`);
  }
}

describe.skipIf(!existsSync(CLAUDE_CODE_BIN))("where Claude Code keeps a session's file", () => {
  const cases: Array<[string, string, NodeJS.ProcessEnv]> = [
    ["a folder with spaces and dots", "my project.v2 (copy)", {}],
    ["a folder past 200 characters", `${"deep-".repeat(45)}end`, {}],
    ["CLAUDE_CODE_PROJECT_DIR_NAME", "named", { CLAUDE_CODE_PROJECT_DIR_NAME: "team_project-1" }],
  ];
  it.each(cases)(
    "for %s",
    async (_name, folder, extra) => {
      const home = mkdtempSync(join(root, "home-"));
      const cwd = join(home, folder);
      mkdirSync(cwd, { recursive: true });
      const env = { ...claudeCodeEnv(home, api.url), ...extra };
      const sessionId = await claudeTurn(cwd, env);
      const expected = claudeSessionFile(env, cwd, sessionId);
      const projects = join(home, ".claude", "projects");
      const written = readdirSync(projects).flatMap((project) =>
        readdirSync(join(projects, project))
          .filter((name) => name === `${sessionId}.jsonl`)
          .map((name) => join(projects, project, name)),
      );
      expect(written).toEqual([expected]);
      if (cwd.length > 200) expect(expected).toMatch(/\/-[A-Za-z0-9-]{199}-[0-9a-z]+\/[^/]+$/);
    },
    60_000,
  );
});
