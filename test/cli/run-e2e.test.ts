import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { processesMatching } from "../helpers/process-scan.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

let api: FakeMessagesApi;
let workspace: string;
let home: string;
const runs: RudderRun[] = [];

beforeEach(async () => {
  api = await startFakeMessagesApi();
  workspace = realpathSync(mkdtempSync(join(tmpdir(), "rudder-run-")));
  home = mkdtempSync(join(tmpdir(), "rudder-home-"));
});

afterEach(async () => {
  for (const run of runs.splice(0)) run.kill();
  await api.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_API_KEY: "dummy",
    RUDDER_MAX_RETRIES: "0",
    ...extra,
  };
}

function rudder(args: string[], extraEnv: NodeJS.ProcessEnv = {}): RudderRun {
  const run = startRudder(args, { cwd: workspace, env: env(extraEnv) });
  runs.push(run);
  return run;
}

function toolResultsOf(body: { messages: Array<{ content: unknown }> }): string {
  return JSON.stringify(body.messages);
}

describe("rudder run against a fake Messages API", () => {
  it("runs tools, waits for a background task and wakes with its notification", async () => {
    api.push(
      { toolUse: { name: "write_file", input: { path: "notes/a.txt", content: "caf\u00e9\n" } } },
      {
        toolUse: {
          name: "bash",
          input: { command: "sleep 0.3; printf bg-done", run_in_background: true },
        },
      },
      { text: "Started the task." },
      { text: "The task finished." },
    );
    const run = rudder(["run", "--output-format", "json", "write a note"]);
    const { code } = await run.exited;
    expect(run.stderr()).toBe("");
    expect(code).toBe(0);

    const printed = JSON.parse(run.stdout());
    expect(printed).toMatchObject({
      result: "The task finished.",
      is_error: false,
      subtype: "success",
      num_turns: 4,
    });
    expect(Object.keys(printed)).toEqual(
      expect.arrayContaining(["session_id", "duration_ms", "usage", "total_cost_usd"]),
    );
    expect(readFileSync(join(workspace, "notes/a.txt"), "utf8")).toBe("caf\u00e9\n");

    const main = api.mainRequests();
    expect(main).toHaveLength(4);
    expect(main[0]?.body.tools.map((tool: { name: string }) => tool.name)).toEqual([
      "bash",
      "read_file",
      "write_file",
      "edit_file",
      "glob",
    ]);
    expect(toolResultsOf(main[1]?.body)).toContain("tool_result");
    expect(toolResultsOf(main[2]?.body)).toContain("Started background task bg_0001");
    const wake = toolResultsOf(main[3]?.body);
    expect(wake).toContain("<task_id>bg_0001</task_id>");
    expect(wake).toContain("<status>completed</status>");
    expect(wake).toContain("bg-done");
  });

  it("resumes a stored conversation with --resume and --continue in text mode", async () => {
    api.push(
      { text: "Noted: the code word is heron." },
      { text: "It was heron." },
      { text: "Still heron." },
    );
    const first = rudder(["run", "--output-format", "json", "remember the code word heron"]);
    expect((await first.exited).code).toBe(0);
    const sessionId = JSON.parse(first.stdout()).session_id as string;

    const second = rudder(["run", "--resume", sessionId, "what was the code word?"]);
    expect((await second.exited).code).toBe(0);
    expect(second.stdout()).toBe("It was heron.\n");
    const resumed = JSON.stringify(api.mainRequests()[1]?.body.messages);
    expect(resumed).toContain("remember the code word heron");
    expect(resumed).toContain("Noted: the code word is heron.");

    const third = rudder(["run", "--continue", "and now?"]);
    expect((await third.exited).code).toBe(0);
    expect(JSON.stringify(api.mainRequests()[2]?.body.messages)).toContain(
      "what was the code word?",
    );

    const unknown = rudder(["run", "--resume", "no-such-session", "hi"]);
    expect((await unknown.exited).code).toBe(1);
    expect(unknown.stderr()).toContain("No conversation found with session ID: no-such-session");
  });

  it("exits 1 with Claude Code's api_error result when the API keeps answering 429", async () => {
    api.push({ error: { status: 429, type: "rate_limit_error", message: "slow down" } });
    const run = rudder(["run", "--output-format", "json", "hi"]);
    const { code } = await run.exited;
    expect(code).toBe(1);
    expect(JSON.parse(run.stdout())).toMatchObject({
      is_error: true,
      subtype: "success",
      api_error_status: 429,
      terminal_reason: "api_error",
    });
  });

  it("answers bad flags with one line and exit 2", async () => {
    const run = rudder(["run", "--output-format", "yaml", "hi"]);
    expect((await run.exited).code).toBe(2);
    expect(run.stderr().trim().split("\n")).toHaveLength(1);
    expect(run.stderr()).toContain("--output-format must be text or json");

    const unknown = rudder(["run", "--frobnicate", "hi"]);
    expect((await unknown.exited).code).toBe(2);
    expect(unknown.stderr()).toContain("unknown option --frobnicate");
    expect(unknown.stderr()).not.toContain("    at ");
  });

  it("leaves no shell alive after SIGTERM, not even a nohup grandchild", async () => {
    api.push({
      toolUse: {
        name: "bash",
        input: { command: "nohup sleep 60.103 >/dev/null 2>&1 & sleep 60" },
      },
    });
    const run = rudder(["run", "wait forever"]);
    await waitFor(() => processesMatching("sleep 60.103").length > 0, "the sleep to start", 15_000);
    const [grandchild = 0] = processesMatching("sleep 60.103");
    expect(isAlive(grandchild)).toBe(true);
    run.child.kill("SIGTERM");
    const { code, signal } = await run.exited;
    expect(code === 143 || signal === "SIGTERM").toBe(true);
    await waitFor(() => !isAlive(grandchild), "the grandchild to be gone", 5000);
  });
});
