import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastToolResults } from "../helpers/fake-messages-api.js";
import { restoreEnvironmentAfterAll } from "../helpers/restore-environment.js";
import { loadAgentSdk } from "./agent-sdk-loader.js";
import type { AgentSdk, SDKMessage } from "./agent-sdk-types.js";
import { protocolHarness } from "./helpers.js";
import { SDK_ENGINES } from "./sdk-engines.js";

restoreEnvironmentAfterAll();

/**
 * An in-process MCP server of the Agent SDK (`createSdkMcpServer`) behind rudder and behind the
 * real Claude Code: its tools reach the model as `mcp__<server>__<tool>`, calls go to the host
 * through `mcp_message` control requests, and the permission rules apply to them as to any
 * MCP tool. Run with both ways the SDK hands servers over (argv and initialize).
 */
const harness = protocolHarness();
afterEach(() => harness.cleanup());

let sdk: AgentSdk;

beforeAll(async () => {
  sdk = await loadAgentSdk();
}, 300_000);

function calculator(calls: string[]): unknown {
  const { tool, z } = sdk;
  return sdk.createSdkMcpServer({
    name: "calc",
    version: "1.0.0",
    tools: [
      tool("add", "Adds two numbers.", { a: z.number(), b: z.number() }, async (input) => {
        calls.push("add");
        return { content: [{ type: "text", text: String(Number(input.a) + Number(input.b)) }] };
      }),
      tool("secret", "Tells a secret.", {}, async () => {
        calls.push("secret");
        return { content: [{ type: "text", text: "the secret" }] };
      }),
    ],
  });
}

const DELIVERIES = ["argv", "initialize"] as const;

describe.each(SDK_ENGINES)("an Agent SDK MCP server behind $name", (engine) => {
  it.each(DELIVERIES)(
    "serves its tools (servers sent by %s)",
    async (delivery) => {
      const api = await harness.api([
        {
          toolUse: [
            { id: "toolu_add", name: "mcp__calc__add", input: { a: 40, b: 2 } },
            { id: "toolu_secret", name: "mcp__calc__secret", input: {} },
          ],
        },
        { text: "done" },
      ]);
      const sandbox = harness.sandbox(api);
      const calls: string[] = [];
      const seen: SDKMessage[] = [];
      for await (const message of sdk.query({
        prompt: "add 40 and 2",
        options: {
          pathToClaudeCodeExecutable: engine.executable(),
          cwd: sandbox.workspace,
          env: engine.env(sandbox),
          mcpServers: { calc: calculator(calls) },
          mcpServersDelivery: delivery,
          allowedTools: ["mcp__calc__add"],
        },
      })) {
        seen.push(message);
      }
      const init = seen.find((message) => message.type === "system") as Record<string, unknown>;
      expect(init.mcp_servers).toEqual([
        expect.objectContaining({ name: "calc", status: "connected" }),
      ]);
      expect(init.tools).toEqual(expect.arrayContaining(["mcp__calc__add", "mcp__calc__secret"]));

      const [first, second] = api.mainRequests();
      const offered = ((first?.body.tools ?? []) as Array<{ name: string }>).map(
        (tool) => tool.name,
      );
      expect(offered).toEqual(expect.arrayContaining(["mcp__calc__add", "mcp__calc__secret"]));
      const results = second === undefined ? [] : lastToolResults(second);
      const add = results.find((block) => block.tool_use_id === "toolu_add");
      expect(JSON.stringify(add?.content)).toContain("42");
      expect(add?.is_error ?? false).toBe(false);
      const secret = results.find((block) => block.tool_use_id === "toolu_secret");
      expect(secret?.is_error).toBe(true);
      expect(calls).toEqual(["add"]);

      const result = seen.at(-1);
      expect(result).toMatchObject({ type: "result", result: "done" });
      expect(
        (result as { permission_denials: Array<{ tool_name: string }> }).permission_denials.map(
          (denial) => denial.tool_name,
        ),
      ).toEqual(["mcp__calc__secret"]);
    },
    120_000,
  );
});
