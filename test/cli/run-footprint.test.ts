import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";

// What a one-shot `rudder run` loads decides its startup time and memory (bench/startup.ts).
// Node's fetch implementation (undici) and TLS are the two big built-ins it can do without
// over http, and node:crypto (with the dozen modules it loads, several milliseconds) one it
// does without altogether (its UUIDs come from agent/random-uuid.ts): this fails when a change
// pulls any of them back in. node:child_process and node:readline it loads only after its first
// request has gone out (sandbox/child-process.ts; the MCP server's code with its command).
//
// Path work is the other cost: every module import the loader resolves, and every join or
// resolve rudder does, runs the path module's normalizer over a whole absolute path. Past a few
// thousand characters of that V8 deems the normalizer hot and compiles it with its optimizing
// compiler, which costs a one-shot run 5 MB of peak memory (measured: 55 MB instead of 50 MB,
// all of it gone with `node --no-opt`). So the counts below are kept small: imports by keeping
// the chunk graph lean (no injected module imported by every chunk), rudder's own calls by
// resolving a folder once and appending names to it where many candidates are probed.
const MAX_MODULE_RESOLUTIONS = 30;
const MAX_RUDDER_PATH_CALLS = 30;

let api: FakeMessagesApi;
let scratch: string;
let run: RudderRun | undefined;

beforeEach(async () => {
  api = await startFakeMessagesApi();
  scratch = mkdtempSync(join(tmpdir(), "rudder-footprint-"));
});

afterEach(async () => {
  if (run !== undefined) run.kill();
  await api.close();
  rmSync(scratch, { recursive: true, force: true });
});

it("a one-shot run with a tool call loads neither Node's fetch, TLS nor crypto, and does little path work", async () => {
  // Claude Code's tool names, as stream-json shows them: the command runs (in the sandbox).
  api.push({ toolUse: { name: "Bash", input: { command: "echo footprint" } } }, { text: "done" });
  const moduleList = join(scratch, "modules.txt");
  const pathWork = join(scratch, "path-work.json");
  const fixtures = join(import.meta.dirname, "..", "fixtures");
  const preloads = ["report-loaded-modules.cjs", "report-path-work.cjs"]
    .map((name) => `--require ${join(fixtures, name)}`)
    .join(" ");
  run = startRudder(["run", "--output-format", "stream-json", "--verbose", "echo something"], {
    cwd: scratch,
    env: {
      PATH: process.env.PATH,
      HOME: scratch,
      RUDDER_HOME: join(scratch, ".rudder"),
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "dummy",
      RUDDER_MAX_RETRIES: "0",
      NODE_OPTIONS: preloads,
      RUDDER_TEST_MODULE_LIST: moduleList,
      RUDDER_TEST_PATH_WORK: pathWork,
    },
  });
  const { code } = await run.exited;
  expect(run.stderr()).toBe("");
  expect(code).toBe(0);
  expect(run.stdout()).toContain('"result":"done"');
  const results = (api.mainRequests()[1]?.body.messages ?? [])
    .flatMap((message: { content: unknown }) =>
      Array.isArray(message.content) ? message.content : [],
    )
    .filter((block: { type: string }) => block.type === "tool_result");
  expect(results).toHaveLength(1);
  expect(JSON.stringify(results[0].content)).toContain("footprint\\n");
  expect(results[0].is_error).not.toBe(true);

  const loaded = readFileSync(moduleList, "utf8").split("\n");
  expect(loaded).toContain("NativeModule http");
  expect(loaded.filter((name) => /undici|\btls\b|\bhttps\b|crypto/.test(name))).toEqual([]);
  const beforeRequest = readFileSync(`${moduleList}.at-first-connect`, "utf8").split("\n");
  expect(beforeRequest).toContain("NativeModule http");
  expect(
    beforeRequest.filter((name) => /^NativeModule (child_process|readline)$/.test(name)),
  ).toEqual([]);
  expect(loaded).toContain("NativeModule child_process");

  const work = JSON.parse(readFileSync(pathWork, "utf8")) as {
    moduleResolutions: number;
    rudderCalls: Record<string, number>;
  };
  expect(work.moduleResolutions).toBeGreaterThan(0);
  expect(work.moduleResolutions).toBeLessThanOrEqual(MAX_MODULE_RESOLUTIONS);
  const rudderCalls = Object.values(work.rudderCalls).reduce((sum, count) => sum + count, 0);
  expect(rudderCalls, JSON.stringify(work.rudderCalls)).toBeGreaterThan(0);
  expect(rudderCalls, JSON.stringify(work.rudderCalls)).toBeLessThanOrEqual(MAX_RUDDER_PATH_CALLS);
});
