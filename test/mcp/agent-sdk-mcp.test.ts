import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { lastToolResults } from "../helpers/fake-messages-api.js";
import { FAKE_MCP_SERVER, RUDDER_CLI } from "../helpers/fixtures.js";
import { isAlive } from "../helpers/process-state.js";
import { restoreEnvironmentAfterAll } from "../helpers/restore-environment.js";
import { waitFor } from "../helpers/wait-for.js";
import { loadAgentSdkQuery } from "../protocol/agent-sdk-loader.js";
import type { Options, QueryFunction, SDKMessage } from "../protocol/agent-sdk-types.js";
import { protocolHarness } from "../protocol/helpers.js";
import { readPids } from "./mcp-helpers.js";

restoreEnvironmentAfterAll();

// The Claude Agent SDK's `mcpServers` option reaches rudder as Claude Code gets it, by
// either delivery: "argv" (`--mcp-config '{"mcpServers": ...}'`, the default of 0.3.x) or
// "initialize" (the servers in the initialize request, under `--await-initialize`, which the
// SDK will default to; it then holds the prompt until rudder answers
// `mcp_servers_applied: true`). Either way the model can call the server's tools.

const harness = protocolHarness();
afterEach(() => harness.cleanup());

let query: QueryFunction;

beforeAll(async () => {
  query = await loadAgentSdkQuery();
}, 300_000);

it.each(["argv", "initialize"] as const)(
  "the Agent SDK's mcpServers option (delivery %s) gives rudder the server's tools",
  async (delivery) => {
    const api = await harness.api([
      { toolUse: { name: "mcp__fake__add", input: { a: 20, b: 22 } } },
      { text: "It is 42." },
    ]);
    const sandbox = harness.sandbox(api);
    const pidFile = join(sandbox.workspace, "fake.pids");
    const options: Options = {
      pathToClaudeCodeExecutable: RUDDER_CLI,
      cwd: sandbox.workspace,
      env: sandbox.env,
      mcpServers: {
        fake: { command: process.execPath, args: [FAKE_MCP_SERVER, "--pid-file", pidFile] },
      },
      mcpServersDelivery: delivery,
      allowedTools: ["mcp__fake"],
    };
    const seen: SDKMessage[] = [];
    for await (const message of query({ prompt: "add 20 and 22", options })) seen.push(message);

    expect(seen.find((message) => message.type === "system")).toMatchObject({
      subtype: "init",
      mcp_servers: [{ name: "fake", status: "connected" }],
    });
    expect(seen.at(-1)).toMatchObject({ type: "result", is_error: false, result: "It is 42." });
    const second = api.mainRequests()[1];
    expect(second && lastToolResults(second)).toMatchObject([{ content: "42" }]);
    const pids = readPids(pidFile);
    expect(pids).toHaveLength(1);
    await waitFor(() => !pids.some(isAlive), "the MCP server to be gone");
  },
);
