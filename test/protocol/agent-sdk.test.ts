import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { FakeMessagesApi, ScriptStep } from "../helpers/fake-messages-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { restoreEnvironmentAfterAll } from "../helpers/restore-environment.js";
import { inputQueue } from "./agent-sdk-input.js";
import { loadAgentSdkQuery } from "./agent-sdk-loader.js";
import type { Options, QueryFunction, SDKMessage } from "./agent-sdk-types.js";
import { protocolHarness, type Sandbox, writeSettings } from "./helpers.js";

restoreEnvironmentAfterAll();

/**
 * The Claude Agent SDK for TypeScript driving rudder instead of Claude Code: the SDK runs
 * `node dist/cli.js` (a `.js` executable path) with its own flags, writes `initialize`
 * first, and throws when the process exits non-zero.
 */
const harness = protocolHarness();
afterEach(() => harness.cleanup());

let query: QueryFunction;

beforeAll(async () => {
  query = await loadAgentSdkQuery();
}, 300_000);

async function setup(script: ScriptStep[]): Promise<{ api: FakeMessagesApi; sandbox: Sandbox }> {
  const api = await harness.api(script);
  return { api, sandbox: harness.sandbox(api) };
}

function options(sandbox: Sandbox, extra: Partial<Options> = {}): Options {
  return {
    pathToClaudeCodeExecutable: RUDDER_CLI,
    cwd: sandbox.workspace,
    env: sandbox.env,
    ...extra,
  };
}

describe("the Claude Agent SDK drives rudder", () => {
  it("query() with a string prompt runs a turn and ends cleanly", async () => {
    const { api, sandbox } = await setup([
      { toolUse: { name: "Bash", input: { command: "echo from-tool" } } },
      { text: "Hello from rudder" },
    ]);
    const seen: SDKMessage[] = [];
    for await (const message of query({ prompt: "say hello", options: options(sandbox) })) {
      seen.push(message);
    }
    const init = seen.find((message) => message.type === "system");
    expect(init).toMatchObject({ subtype: "init", cwd: sandbox.workspace });
    const result = seen.at(-1);
    expect(result).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Hello from rudder",
    });
    expect(seen.filter((message) => message.type === "assistant")).toHaveLength(2);
    expect(api.mainRequests()).toHaveLength(2);
  });

  it("query() with streaming input answers several messages, turn by turn", async () => {
    const { api, sandbox } = await setup([{ text: "first answer" }, { text: "second answer" }]);
    const input = inputQueue();
    input.push("first question");
    const results: string[] = [];
    for await (const message of query({ prompt: input.messages(), options: options(sandbox) })) {
      if (message.type !== "result") continue;
      results.push(message.subtype === "success" ? (message.result ?? "") : message.subtype);
      if (results.length === 1) input.push("second question");
      else input.close();
    }
    expect(results).toEqual(["first answer", "second answer"]);
    expect(api.mainRequests()[1]?.body.messages).toHaveLength(3);
  });

  it("interrupt() stops a turn in flight and the session goes on", async () => {
    const { api, sandbox } = await setup([
      { hangUntilAborted: true, text: "partial" },
      { text: "after" },
    ]);
    const input = inputQueue();
    input.push("start something slow");
    const conversation = query({ prompt: input.messages(), options: options(sandbox) });
    const results: Array<{ isError: boolean; text: string }> = [];
    for await (const message of conversation) {
      if (message.type === "system" && results.length === 0) {
        await api.waitForMainRequests(1);
        await conversation.interrupt();
      }
      if (message.type !== "result") continue;
      results.push({
        isError: message.is_error,
        text: message.subtype === "success" ? (message.result ?? "") : "",
      });
      if (results.length === 1) input.push("and now?");
      else input.close();
    }
    expect(results[0]?.isError).toBe(true);
    expect(results[1]).toEqual({ isError: false, text: "after" });
  });

  it("canUseTool answers rudder's ask decisions: allow runs the tool, deny does not", async () => {
    const { sandbox } = await setup([
      { toolUse: { name: "Bash", input: { command: "touch yes.txt" } } },
      { toolUse: { name: "Bash", input: { command: "touch no.txt" } } },
      { text: "asked twice" },
    ]);
    writeSettings(sandbox.workspace, { permissions: { ask: ["Bash(touch:*)"] } });
    const asked: Array<{ tool: string; command: unknown; toolUseId: string }> = [];
    const seen: SDKMessage[] = [];
    const conversation = query({
      prompt: "make files",
      options: options(sandbox, {
        canUseTool: async (tool, input, context) => {
          asked.push({ tool, command: input.command, toolUseId: context.toolUseID });
          return input.command === "touch yes.txt"
            ? { behavior: "allow", updatedInput: input }
            : { behavior: "deny", message: "not this one" };
        },
      }),
    });
    for await (const message of conversation) seen.push(message);

    expect(asked.map((entry) => [entry.tool, entry.command])).toEqual([
      ["Bash", "touch yes.txt"],
      ["Bash", "touch no.txt"],
    ]);
    expect(asked[0]?.toolUseId).toEqual(expect.any(String));
    expect(existsSync(join(sandbox.workspace, "yes.txt"))).toBe(true);
    expect(existsSync(join(sandbox.workspace, "no.txt"))).toBe(false);
    expect(seen.at(-1)).toMatchObject({ type: "result", is_error: false, result: "asked twice" });
  });

  it("passes the SDK's systemPrompt and model to rudder, project instructions kept", async () => {
    const { api, sandbox } = await setup([{ text: "arr" }]);
    writeFileSync(join(sandbox.workspace, "CLAUDE.md"), "Say arr. PIRATE-RULE-88\n");
    const seen: SDKMessage[] = [];
    for await (const message of query({
      prompt: "hello",
      options: options(sandbox, { systemPrompt: "You are a pirate.", model: "claude-test-model" }),
    })) {
      seen.push(message);
    }
    expect(seen.at(-1)).toMatchObject({ type: "result", result: "arr" });
    const request = api.mainRequests()[0];
    expect(JSON.stringify(request?.body.system)).toContain("You are a pirate.");
    expect(JSON.stringify(request?.body.system)).toContain("PIRATE-RULE-88");
    expect(request?.body.model).toBe("claude-test-model");
  });
});
