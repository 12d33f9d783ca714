import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ConnectOptions } from "../../src/mcp/mcp-connection.js";
import { connectMcpServers, type McpServers } from "../../src/mcp/mcp-servers.js";
import type { AnyTool, ToolContext } from "../../src/tools/types.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import { fakeServer, readPids } from "./mcp-helpers.js";

let scratch: string;
const opened: McpServers[] = [];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "rudder-mcp-"));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((servers) => servers.close()));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function options(overrides: Partial<ConnectOptions> = {}): ConnectOptions {
  return {
    cwd: scratch,
    env: process.env,
    startupTimeoutMs: 10_000,
    toolTimeoutMs: 10_000,
    clientVersion: "0.0.0-test",
    ...overrides,
  };
}

async function connect(...args: Parameters<typeof connectMcpServers>): Promise<McpServers> {
  const servers = await connectMcpServers(...args);
  opened.push(servers);
  return servers;
}

function context(signal = new AbortController().signal): ToolContext {
  return { workspace: scratch, signal };
}

function toolNamed(servers: McpServers, name: string): AnyTool {
  const tool = servers.tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool;
}

describe("connectMcpServers", () => {
  it("turns a server's tools into kernel tools named mcp__<server>__<tool>", async () => {
    const servers = await connect([fakeServer("fake")], options());
    expect(servers.warnings).toEqual([]);
    expect(servers.statuses).toEqual([
      expect.objectContaining({
        name: "fake",
        status: "connected",
        serverInfo: { name: "fake", version: "1.0.0" },
        config: expect.objectContaining({ type: "stdio", command: process.execPath }),
      }),
    ]);
    expect(servers.statuses[0]?.tools?.map((tool) => tool.name)).toContain("echo");
    expect(servers.tools.map((tool) => tool.name)).toEqual([
      "mcp__fake__echo",
      "mcp__fake__add",
      "mcp__fake__fail",
      "mcp__fake__hang",
      "mcp__fake__crash",
      "mcp__fake__picture",
    ]);
    const echo = toolNamed(servers, "mcp__fake__echo");
    expect(echo.description).toBe("Echoes the text it is given.");
    expect(echo.jsonSchema).toEqual({
      type: "object",
      properties: { text: { type: "string", description: "What to echo" } },
      required: ["text"],
    });
    expect(await echo.execute({ text: "hello" }, context())).toEqual({
      content: "echo: hello",
      isError: false,
    });
    expect(await toolNamed(servers, "mcp__fake__add").execute({ a: 2, b: 40 }, context())).toEqual({
      content: "42",
      isError: false,
    });
    expect(await toolNamed(servers, "mcp__fake__fail").execute({}, context())).toEqual({
      content: "fail: it went wrong on purpose",
      isError: true,
    });
    const picture = await toolNamed(servers, "mcp__fake__picture").execute({}, context());
    expect(picture.content).toBe("a blank picture");
    expect(picture.parts).toEqual([
      { type: "image", mediaType: "image/png", data: expect.any(String) },
      { type: "text", text: "a blank picture" },
    ]);
  });

  it("ends a hanging call at the tool timeout or when aborted, and the server goes on", async () => {
    const servers = await connect([fakeServer("fake")], options({ toolTimeoutMs: 300 }));
    const hang = toolNamed(servers, "mcp__fake__hang");
    const timedOut = await hang.execute({}, context());
    expect(timedOut.isError).toBe(true);
    expect(timedOut.content).toBe(
      'Error: MCP server "fake" did not answer the call to hang within 0.3 s, so rudder stopped waiting (MCP_TOOL_TIMEOUT, or the server\'s "timeout", sets the limit)',
    );

    const controller = new AbortController();
    const pending = hang.execute({}, context(controller.signal));
    controller.abort();
    expect(await pending).toEqual({
      content: "Error: the call to hang was aborted",
      isError: true,
    });

    const echo = await toolNamed(servers, "mcp__fake__echo").execute({ text: "still" }, context());
    expect(echo).toEqual({ content: "echo: still", isError: false });
  });

  it("answers a call its server died in with an error, and starts the server again on its next use", async () => {
    const servers = await connect([fakeServer("fake")], options());
    const firstPid = servers.connections[0]?.pid;
    const crashed = await toolNamed(servers, "mcp__fake__crash").execute({}, context());
    expect(crashed).toEqual({
      content:
        'Error: MCP server "fake" is not running (it exited with status 5); its last stderr line: fake-mcp-server: crash tool called; it will be started again on its next use',
      isError: true,
    });
    const echo = toolNamed(servers, "mcp__fake__echo");
    const [after, together] = await Promise.all([
      echo.execute({ text: "x" }, context()),
      echo.execute({ text: "y" }, context()),
    ]);
    expect(after).toEqual({
      content:
        'Note: MCP server "fake" had stopped (it exited with status 5) and was started again for this call; whatever it held from before is gone.\necho: x',
      isError: false,
    });
    expect(together?.content).toMatch(/had stopped .*\necho: y$/);
    const secondPid = servers.connections[0]?.pid;
    expect(secondPid).not.toBe(firstPid);
    expect(await echo.execute({ text: "z" }, context())).toEqual({
      content: "echo: z",
      isError: false,
    });
    await servers.close();
    await waitFor(
      () => secondPid !== undefined && !isAlive(secondPid),
      "the restarted server gone",
    );
  });

  it("says so when a server that died cannot be started again", async () => {
    const marker = join(scratch, "crash-on-start");
    const servers = await connect([fakeServer("fake", ["--crash-if-exists", marker])], options());
    await toolNamed(servers, "mcp__fake__crash").execute({}, context());
    writeFileSync(marker, "");
    const after = await toolNamed(servers, "mcp__fake__echo").execute({ text: "x" }, context());
    expect(after.isError).toBe(true);
    expect(after.content).toMatch(
      /^Error: MCP server "fake" is not running \(it exited with status 5\).*; starting it again failed: exited with status 3 while starting$/,
    );
  });

  it("leaves out servers that fail to start, with one warning each, and keeps the rest", async () => {
    const servers = await connect(
      [
        { ...fakeServer("missing"), command: join(scratch, "no-such-server") },
        fakeServer("crashing", ["--mode", "crash"]),
        fakeServer("good"),
      ],
      options(),
    );
    expect(servers.statuses.map(({ name, status }) => ({ name, status }))).toEqual([
      { name: "missing", status: "failed" },
      { name: "crashing", status: "failed" },
      { name: "good", status: "connected" },
    ]);
    expect(servers.statuses[0]?.error).toMatch(/ENOENT/);
    expect(servers.warnings).toHaveLength(2);
    expect(servers.warnings[0]).toMatch(
      /^MCP server "missing" \(test\) failed: .*ENOENT.*; its tools are absent$/,
    );
    expect(servers.warnings[1]).toBe(
      'MCP server "crashing" (test) failed: exited with status 3 while starting (stderr: fake-mcp-server: crashing on purpose); its tools are absent',
    );
    expect(servers.tools.every((tool) => tool.name.startsWith("mcp__good__"))).toBe(true);
    expect(servers.tools).toHaveLength(6);
  });

  it("gives up on a server that does not initialize within the startup timeout, and kills it", async () => {
    const pidFile = join(scratch, "silent.pids");
    const servers = await connect(
      [fakeServer("silent", ["--mode", "silent", "--pid-file", pidFile])],
      // Long enough for node to start the server even on a loaded machine (it then never answers).
      options({ startupTimeoutMs: 2000 }),
    );
    expect(servers.warnings).toHaveLength(1);
    expect(servers.warnings[0]).toMatch(
      /^MCP server "silent" \(test\) failed: did not start within 2000 ms \(MCP_TIMEOUT\)( \(stderr: fake-mcp-server: started in mode silent\))?; its tools are absent$/,
    );
    expect(servers.tools).toEqual([]);
    const [pid] = readPids(pidFile);
    expect(pid).toBeDefined();
    await waitFor(() => !isAlive(pid as number), "the silent server to be dead");
  });

  it("kills each server's whole process group on close, SIGKILL for what ignores SIGTERM", async () => {
    const pidFile = join(scratch, "group.pids");
    const servers = await connect(
      [fakeServer("fake", ["--pid-file", pidFile, "--grandchild", "--ignore-sigterm"])],
      options(),
    );
    const pids = readPids(pidFile);
    expect(pids).toHaveLength(2);
    expect(servers.connections[0]?.pid).toBe(pids[0]);
    expect(pids.every(isAlive)).toBe(true);
    await servers.close();
    await waitFor(() => !pids.some(isAlive), "the server and its grandchild to be dead");
  });
});
