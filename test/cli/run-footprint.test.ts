import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type FakeMessagesApi, startFakeMessagesApi } from "../fixtures/fake-messages-api.js";
import { killRudderGroup, type RudderRun, startRudder } from "./rudder-process.js";

// What a one-shot `rudder run` loads decides its startup time and memory (bench/startup.ts).
// Node's fetch implementation (undici) and TLS are the two big built-ins it can do without
// over http: this fails when a change pulls either back in.

let api: FakeMessagesApi;
let scratch: string;
let run: RudderRun | undefined;

beforeEach(async () => {
  api = await startFakeMessagesApi();
  scratch = mkdtempSync(join(tmpdir(), "rudder-footprint-"));
});

afterEach(async () => {
  if (run !== undefined) killRudderGroup(run);
  await api.close();
  rmSync(scratch, { recursive: true, force: true });
});

it("a one-shot run with a tool call loads neither Node's fetch nor TLS", async () => {
  api.push({ toolUse: { name: "bash", input: { command: "echo footprint" } } }, { text: "done" });
  const moduleList = join(scratch, "modules.txt");
  const preload = join(import.meta.dirname, "..", "fixtures", "report-loaded-modules.cjs");
  run = startRudder(["run", "--output-format", "stream-json", "--verbose", "echo something"], {
    cwd: scratch,
    env: {
      PATH: process.env.PATH,
      HOME: scratch,
      RUDDER_HOME: join(scratch, ".rudder"),
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "dummy",
      RUDDER_MAX_RETRIES: "0",
      NODE_OPTIONS: `--require ${preload}`,
      RUDDER_TEST_MODULE_LIST: moduleList,
    },
  });
  const { code } = await run.exited;
  expect(run.stderr()).toBe("");
  expect(code).toBe(0);
  expect(run.stdout()).toContain('"result":"done"');
  expect(JSON.stringify(api.mainRequests()[1]?.body.messages)).toContain("footprint");

  const loaded = readFileSync(moduleList, "utf8").split("\n");
  expect(loaded).toContain("NativeModule http");
  expect(loaded.filter((name) => /undici|\btls\b|\bhttps\b/.test(name))).toEqual([]);
});
