/**
 * `rudder run --max-budget-usd N`, as in Claude Code: once the run's priced usage has reached N,
 * the turn ends at its next model call as `error_max_budget_usd` (exit 1), what it did so far
 * kept; a bad amount is refused with one line.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { runRudder } from "../helpers/rudder-cli.js";

let api: FakeMessagesApi;
let workspace: string;

beforeAll(async () => {
  api = await startFakeMessagesApi();
  workspace = mkdtempSync(join(tmpdir(), "rudder-max-budget-"));
});

afterAll(async () => {
  await api.close();
  rmSync(workspace, { recursive: true, force: true });
});

const env = () => ({
  PATH: process.env.PATH,
  HOME: workspace,
  RUDDER_HOME: join(workspace, ".rudder-home"),
  ANTHROPIC_BASE_URL: api.url,
  ANTHROPIC_API_KEY: "dummy",
  RUDDER_MAX_RETRIES: "0",
});

it("stops at the next model call once the priced usage reached the budget", async () => {
  api.push(
    { toolUse: { name: "write_file", input: { path: "first.txt", content: "kept\n" } } },
    { toolUse: { name: "write_file", input: { path: "second.txt", content: "never\n" } } },
    { text: "done" },
  );
  // One call of a few thousand tokens at Sonnet's $3 per million is well past a tenth of a cent.
  const run = await runRudder(
    [
      "run",
      "--model",
      "claude-sonnet-4-5",
      "--no-sandbox",
      "--output-format",
      "json",
      "--max-budget-usd",
      "0.001",
      "write the files",
    ],
    { cwd: workspace, env: env() },
  );
  expect(run.code).toBe(1);
  const result = JSON.parse(run.stdout) as Record<string, unknown>;
  expect(result).toMatchObject({
    is_error: true,
    subtype: "error_max_budget_usd",
    result: "Reached maximum budget ($0.001)",
  });
  expect(result.total_cost_usd as number).toBeGreaterThanOrEqual(0.001);
  expect(api.requests.filter((request) => request.main)).toHaveLength(1);
  expect(readFileSync(join(workspace, "first.txt"), "utf8")).toBe("kept\n");
  expect(existsSync(join(workspace, "second.txt"))).toBe(false);
});

it("refuses an amount that is not a positive number", async () => {
  const run = await runRudder(["run", "--max-budget-usd", "free", "hello"], {
    cwd: workspace,
    env: env(),
  });
  expect(run.code).toBe(2);
  expect(run.stderr).toContain(
    '--max-budget-usd needs a positive number of US dollars (got "free")',
  );
});
