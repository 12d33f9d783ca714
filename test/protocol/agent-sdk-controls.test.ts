import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { FAKE_MCP_SERVER } from "../helpers/fixtures.js";
import { restoreEnvironmentAfterAll } from "../helpers/restore-environment.js";
import { inputQueue } from "./agent-sdk-input.js";
import { loadAgentSdkQuery } from "./agent-sdk-loader.js";
import type { Query, QueryFunction, SDKMessage } from "./agent-sdk-types.js";
import { protocolHarness } from "./helpers.js";
import { SDK_ENGINES } from "./sdk-engines.js";

restoreEnvironmentAfterAll();

/**
 * The Agent SDK's `Query` control methods against rudder and against the real Claude Code,
 * the same scenario on both: each answer the SDK reads must be there on rudder too.
 */
const harness = protocolHarness();
afterEach(() => harness.cleanup());

const START_MODEL = "claude-opus-5-5";
const SWITCHED_MODEL = "claude-haiku-4-5-20251001";

let query: QueryFunction;

beforeAll(async () => {
  query = await loadAgentSdkQuery();
}, 300_000);

/** Reads the conversation until a message matches, keeping what it read. */
async function readUntil(
  iterator: AsyncIterator<SDKMessage>,
  seen: SDKMessage[],
  predicate: (message: SDKMessage) => boolean,
): Promise<SDKMessage> {
  for (;;) {
    const next = await iterator.next();
    if (next.done) throw new Error(`the conversation ended; saw ${JSON.stringify(seen)}`);
    seen.push(next.value);
    if (predicate(next.value)) return next.value;
  }
}

describe.each(SDK_ENGINES)("the Agent SDK's control methods on $name", (engine) => {
  it("setModel switches the next model call; the mode, thinking and MCP status answer", async () => {
    const api = await harness.api([{ text: "first" }, { text: "second" }]);
    const sandbox = harness.sandbox(api);
    const input = inputQueue();
    const conversation: Query = query({
      prompt: input.messages(),
      options: {
        pathToClaudeCodeExecutable: engine.executable(),
        cwd: sandbox.workspace,
        env: engine.env(sandbox),
        model: START_MODEL,
        mcpServers: { fake: { command: process.execPath, args: [FAKE_MCP_SERVER] } },
        mcpServersDelivery: "argv",
      },
    });
    const iterator = conversation[Symbol.asyncIterator]();
    const seen: SDKMessage[] = [];
    try {
      const models = await conversation.supportedModels();
      expect(models.map((model) => model.value)).toEqual(
        expect.arrayContaining(["default", "opus", "sonnet", "haiku"]),
      );
      for (const model of models) expect(model.resolvedModel).toMatch(/^claude-/);
      expect(Array.isArray(await conversation.supportedCommands())).toBe(true);
      expect(await conversation.accountInfo()).toMatchObject({ apiKeySource: "ANTHROPIC_API_KEY" });

      await conversation.setModel(SWITCHED_MODEL);
      input.push("first question");
      const init = await readUntil(iterator, seen, (message) => message.type === "system");
      expect(init).toMatchObject({ subtype: "init", model: SWITCHED_MODEL });
      const first = await readUntil(iterator, seen, (message) => message.type === "result");
      expect(first).toMatchObject({ result: "first" });
      expect(Object.keys((first as { modelUsage: object }).modelUsage)).toEqual([SWITCHED_MODEL]);
      expect(api.mainRequests().map((request) => request.body.model)).toEqual([SWITCHED_MODEL]);

      expect(await conversation.setPermissionMode("acceptEdits")).toEqual({ mode: "acceptEdits" });
      await readUntil(
        iterator,
        seen,
        (message) => message.type === "system" && message.subtype === "status",
      );
      await expect(conversation.setPermissionMode("sideways")).rejects.toThrow(
        /Cannot set permission mode: must be one of/,
      );
      await conversation.setMaxThinkingTokens(null);

      const servers = await conversation.mcpServerStatus();
      expect(servers).toHaveLength(1);
      expect(servers[0]).toMatchObject({ name: "fake", status: "connected" });
      expect(servers[0]?.tools?.map((tool) => tool.name)).toContain("echo");

      await conversation.setModel();
      input.push("second question");
      const again = await readUntil(iterator, seen, (message) => message.type === "system");
      expect(again).toMatchObject({ model: START_MODEL, permissionMode: "acceptEdits" });
      await readUntil(iterator, seen, (message) => message.type === "result");
      expect(api.mainRequests().map((request) => request.body.model)).toEqual([
        SWITCHED_MODEL,
        START_MODEL,
      ]);
      if (engine.name === "rudder") {
        await expect(conversation.getContextUsage()).rejects.toThrow(
          "Unsupported control request subtype: get_context_usage",
        );
      }
    } finally {
      input.close();
      while (!(await iterator.next()).done) {
        // drain to the end, so the process exits
      }
    }
  }, 120_000);
});
