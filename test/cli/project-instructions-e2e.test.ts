import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { runProcess } from "../helpers/owned-process.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";

const CLAUDE = resolve(".cache/claude-code/node_modules/.bin/claude");

let api: FakeMessagesApi;
let root: string;
let workspace: string;
let home: string;
const runs: RudderRun[] = [];

beforeEach(async () => {
  api = await startFakeMessagesApi({ fallback: () => ({ text: "noted" }) });
  root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-instructions-e2e-")));
  workspace = join(root, "repo");
  home = join(root, "home");
  mkdirSync(join(workspace, "docs"), { recursive: true });
  mkdirSync(join(home, ".claude"), { recursive: true });
  writeFileSync(
    join(workspace, "CLAUDE.md"),
    "Always answer in French. PROJECT-RULE-7731\n@docs/testing.md\n@docs/gone.md\n",
  );
  writeFileSync(
    join(workspace, "docs", "testing.md"),
    "Run the tests with make check. IMPORTED-RULE-5520\n",
  );
  writeFileSync(join(home, ".claude", "CLAUDE.md"), "USER-RULE-1204\n");
});

afterEach(async () => {
  for (const run of runs.splice(0)) run.kill();
  await api.close();
  rmSync(root, { recursive: true, force: true });
});

async function rudder(extraArgs: string[]): Promise<{
  lines: Array<Record<string, unknown>>;
  stderr: string;
  system: string;
}> {
  const run = startRudder(
    ["run", "hello", "--output-format", "stream-json", "--verbose", ...extraArgs],
    {
      cwd: workspace,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: "dummy",
        RUDDER_MAX_RETRIES: "0",
      },
    },
  );
  runs.push(run);
  const { code } = await run.exited;
  expect(code, run.stderr()).toBe(0);
  const lines = run
    .stdout()
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const body = api.mainRequests().at(-1)?.body as { system?: unknown };
  return { lines, stderr: run.stderr(), system: JSON.stringify(body.system ?? "") };
}

function initOf(lines: Array<Record<string, unknown>>): Record<string, unknown> | undefined {
  return lines.find((line) => line.type === "system" && line.subtype === "init");
}

describe("project instructions in rudder run", () => {
  it("puts CLAUDE.md, its import and the user's file into the system prompt and lists them in system/init", async () => {
    const { lines, stderr, system } = await rudder([]);
    expect(system).toContain("PROJECT-RULE-7731");
    expect(system).toContain("IMPORTED-RULE-5520");
    expect(system).toContain("USER-RULE-1204");
    expect(system.indexOf("USER-RULE-1204")).toBeLessThan(system.indexOf("PROJECT-RULE-7731"));
    expect(initOf(lines)?.project_instruction_files).toEqual([
      join(home, ".claude", "CLAUDE.md"),
      join(workspace, "CLAUDE.md"),
      join(workspace, "docs", "testing.md"),
    ]);
    expect(stderr).toContain(
      `${join(workspace, "CLAUDE.md")}: imported file @docs/gone.md not found`,
    );
  });

  it("keeps them after a replaced prompt, before the appended one", async () => {
    const { system } = await rudder([
      "--system-prompt",
      "CUSTOM-PROMPT",
      "--append-system-prompt",
      "APPENDED-PART",
    ]);
    expect(system.indexOf("CUSTOM-PROMPT")).toBeGreaterThanOrEqual(0);
    expect(system.indexOf("CUSTOM-PROMPT")).toBeLessThan(system.indexOf("PROJECT-RULE-7731"));
    expect(system.indexOf("PROJECT-RULE-7731")).toBeLessThan(system.indexOf("APPENDED-PART"));
    expect(system).not.toContain("You are rudder");
  });

  it("leaves them out with --no-project-instructions or the projectInstructions setting", async () => {
    const flagged = await rudder(["--no-project-instructions"]);
    expect(flagged.system).not.toContain("RULE-");
    expect(initOf(flagged.lines)?.project_instruction_files).toEqual([]);
    expect(flagged.stderr).not.toContain("gone.md");

    mkdirSync(join(workspace, ".rudder"));
    writeFileSync(
      join(workspace, ".rudder", "settings.json"),
      JSON.stringify({ projectInstructions: false }),
    );
    const configured = await rudder([]);
    expect(configured.system).not.toContain("RULE-");
  });
});

describe.skipIf(!existsSync(CLAUDE))("project instructions in the real Claude Code", () => {
  it("sends the same files' text for the same workspace", async () => {
    const claude = await runProcess(
      CLAUDE,
      ["-p", "hello", "--output-format", "stream-json", "--verbose"],
      { cwd: workspace, env: claudeCodeEnv(home, api.url) },
    );
    expect(claude.code, claude.stderr).toBe(0);
    // Claude Code sends them as the first user message's reminder, rudder in `system`.
    const claudeRequest = JSON.stringify(api.mainRequests().at(-1)?.body.messages[0]);
    for (const marker of ["USER-RULE-1204", "PROJECT-RULE-7731", "IMPORTED-RULE-5520"]) {
      expect(claudeRequest).toContain(marker);
    }
    const { system } = await rudder([]);
    for (const marker of ["USER-RULE-1204", "PROJECT-RULE-7731", "IMPORTED-RULE-5520"]) {
      expect(system).toContain(marker);
    }
  });
});
