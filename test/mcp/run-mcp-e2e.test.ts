import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  lastToolResults,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { FAKE_MCP_SERVER } from "../helpers/fixtures.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { readPids } from "./mcp-helpers.js";

// The built `rudder run` with MCP servers from .mcp.json and --mcp-config, against the fake
// Messages API: the model calls an MCP tool and reads its result, a server that cannot start
// is one warning, and no server process outlives rudder.

let api: FakeMessagesApi;
let workspace: string;
let home: string;
const runs: RudderRun[] = [];
const pidFiles: string[] = [];

beforeEach(async () => {
  api = await startFakeMessagesApi();
  workspace = realpathSync(mkdtempSync(join(tmpdir(), "rudder-mcp-run-")));
  home = mkdtempSync(join(tmpdir(), "rudder-mcp-home-"));
});

afterEach(async () => {
  for (const run of runs.splice(0)) run.kill();
  for (const pid of pidFiles.splice(0).flatMap(readPids)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone, as it should be
    }
  }
  await api.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

function rudder(args: string[]): RudderRun {
  const run = startRudder(args, {
    cwd: workspace,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "dummy",
      RUDDER_MAX_RETRIES: "0",
    },
  });
  runs.push(run);
  return run;
}

/** A server entry for the fake MCP server, recording its pids (and a grandchild's) in a file. */
function fakeEntry(pidFileName: string, extra: string[] = []) {
  const pidFile = join(workspace, pidFileName);
  pidFiles.push(pidFile);
  return {
    command: process.execPath,
    args: [FAKE_MCP_SERVER, "--pid-file", pidFile, "--grandchild", ...extra],
  };
}

function serverPids(pidFileName: string): number[] {
  return readPids(join(workspace, pidFileName));
}

describe("rudder run with MCP servers", () => {
  it("calls an MCP tool from .mcp.json, warns about a server that fails, and leaves no server behind", async () => {
    writeFileSync(
      join(workspace, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          fake: fakeEntry("fake.pids"),
          broken: { command: join(workspace, "no-such-server") },
          remote: { type: "http", url: "http://127.0.0.1:9/mcp" },
        },
      }),
    );
    api.push(
      { toolUse: { name: "mcp__fake__echo", input: { text: "ping" } } },
      { text: "The server said pong-ish." },
    );
    const run = rudder([
      "run",
      "--allowedTools",
      "mcp__fake__echo",
      "--output-format",
      "json",
      "echo ping",
    ]);
    const { code } = await run.exited;
    expect(code).toBe(0);
    expect(JSON.parse(run.stdout())).toMatchObject({
      result: "The server said pong-ish.",
      is_error: false,
    });
    const warnings = run.stderr().trim().split("\n");
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      /^rudder: .*\.mcp\.json: MCP server "remote" has type "http", which rudder does not support \(only stdio and sdk\); skipped$/,
    );
    expect(warnings[1]).toMatch(
      /^rudder: MCP server "broken" \(.*\.mcp\.json\) failed: .*ENOENT.*; its tools are absent$/,
    );

    const [first, second] = api.mainRequests();
    const echo = first?.body.tools.find(
      (tool: { name: string }) => tool.name === "mcp__fake__echo",
    );
    expect(echo).toEqual({
      name: "mcp__fake__echo",
      description: "Echoes the text it is given.",
      input_schema: {
        type: "object",
        properties: { text: { type: "string", description: "What to echo" } },
        required: ["text"],
      },
    });
    expect(second && lastToolResults(second)).toMatchObject([{ content: "echo: ping" }]);

    const pids = serverPids("fake.pids");
    expect(pids).toHaveLength(2);
    await waitFor(() => !pids.some(isAlive), "the MCP server and its grandchild to be gone");
  });

  it("takes --mcp-config JSON (strict: not .mcp.json), lists servers in system/init, asks for MCP tools, and hooks see their names", async () => {
    writeFileSync(
      join(workspace, ".mcp.json"),
      JSON.stringify({ mcpServers: { project: fakeEntry("project.pids") } }),
    );
    const settings = {
      hooks: {
        PreToolUse: [
          { matcher: "mcp__.*", hooks: [{ type: "command", command: "cat >> hook-input.jsonl" }] },
        ],
      },
    };
    api.push(
      { toolUse: { name: "mcp__fake__add", input: { a: 1, b: 2 } } },
      { text: "Not allowed, fine." },
    );
    const run = rudder([
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--settings",
      JSON.stringify(settings),
      "--mcp-config",
      JSON.stringify({ mcpServers: { fake: fakeEntry("fake.pids") } }),
      "--strict-mcp-config",
      "add one and two",
    ]);
    const { code } = await run.exited;
    expect(run.stderr()).toBe("");
    expect(code).toBe(0);
    const lines = run
      .stdout()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const init = lines.find((line) => line.type === "system" && line.subtype === "init");
    expect(init.mcp_servers).toEqual([{ name: "fake", status: "connected" }]);
    expect(init.tools).toEqual(
      expect.arrayContaining(["Bash", "mcp__fake__echo", "mcp__fake__add", "mcp__fake__hang"]),
    );
    expect(init.tools.some((name: string) => name.startsWith("mcp__project__"))).toBe(false);
    expect(existsSync(join(workspace, "project.pids"))).toBe(false);

    const result = lastToolResults(api.mainRequests()[1] ?? ({} as never));
    expect(result).toMatchObject([{ is_error: true }]);
    expect(String(result[0]?.content)).toContain("Permission denied");

    const hookInput = JSON.parse(readFileSync(join(workspace, "hook-input.jsonl"), "utf8"));
    expect(hookInput).toMatchObject({
      hook_event_name: "PreToolUse",
      tool_name: "mcp__fake__add",
      tool_input: { a: 1, b: 2 },
    });
    const pids = serverPids("fake.pids");
    await waitFor(() => !pids.some(isAlive), "the MCP server and its grandchild to be gone");
  });

  it("kills a server that is still starting when rudder gets SIGTERM", async () => {
    const config = { mcpServers: { slow: fakeEntry("slow.pids", ["--mode", "silent"]) } };
    const run = rudder(["run", "--mcp-config", JSON.stringify(config), "never sent"]);
    await waitFor(() => serverPids("slow.pids").length === 2, "the server to start");
    const pids = serverPids("slow.pids");
    run.child.kill("SIGTERM");
    expect((await run.exited).code).toBe(143);
    expect(api.mainRequests()).toEqual([]);
    await waitFor(() => !pids.some(isAlive), "the MCP server and its grandchild to be gone");
  });

  it("kills the MCP servers' process groups when rudder gets SIGTERM mid-call", async () => {
    const callLog = join(workspace, "calls.log");
    const config = {
      mcpServers: { fake: fakeEntry("fake.pids", ["--ignore-sigterm", "--call-log", callLog]) },
    };
    api.push({ toolUse: { name: "mcp__fake__hang", input: {} } }, { text: "never" });
    const run = rudder([
      "run",
      "--mcp-config",
      JSON.stringify(config),
      "--allowedTools",
      "mcp__fake",
      "hang around",
    ]);
    await waitFor(
      () => existsSync(callLog) && readFileSync(callLog, "utf8") === "hang\n",
      "the hanging call",
    );
    const pids = serverPids("fake.pids");
    expect(pids.every(isAlive)).toBe(true);
    run.child.kill("SIGTERM");
    const { code } = await run.exited;
    expect(code).toBe(143);
    await waitFor(() => !pids.some(isAlive), "the MCP server and its grandchild to be gone");
  });
});
