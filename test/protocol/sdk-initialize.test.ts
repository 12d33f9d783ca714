import { afterEach, describe, expect, it } from "vitest";
import { lastToolResults } from "../helpers/fake-messages-api.js";
import { FAKE_MCP_SERVER } from "../helpers/fixtures.js";
import { type Line, protocolHarness, type RudderChild, STREAM_ARGS } from "./helpers.js";

// What the Agent SDK sends in `initialize` beyond prompts, answered by a hand-written host:
// hook callbacks (rudder calls back with `hook_callback`) and MCP servers.

const harness = protocolHarness();
afterEach(() => harness.cleanup());

function initialize(rudder: RudderChild, requestId: string, fields: Record<string, unknown>): void {
  rudder.send({
    type: "control_request",
    request_id: requestId,
    request: { subtype: "initialize", ...fields },
  });
}

function isHookCallback(line: Line, callbackId: string): boolean {
  return (
    line.type === "control_request" &&
    line.request?.subtype === "hook_callback" &&
    line.request.callback_id === callbackId
  );
}

function answer(rudder: RudderChild, request: Line, response: Record<string, unknown>): void {
  rudder.send({
    type: "control_response",
    response: { subtype: "success", request_id: request.request_id, response },
  });
}

describe("hook callbacks registered in initialize", () => {
  it("are called with hook_callback and their answers block, add context and warn", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "echo should-not-run > ran.txt" } } },
      { text: "blocked, as told" },
    ]);
    const rudder = harness.start(harness.sandbox(api));
    initialize(rudder, "init-1", {
      hooks: {
        UserPromptSubmit: [{ hookCallbackIds: ["hook_0"] }],
        PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_1"], timeout: 30 }],
        PostToolUse: [{ matcher: "Read", hookCallbackIds: ["hook_2"] }],
        SessionStart: [{ hookCallbackIds: ["hook_3"] }],
      },
    });
    rudder.sendUser("run it");

    const prompt = await rudder.waitFor((line) => isHookCallback(line, "hook_0"));
    expect(prompt.request.input).toMatchObject({
      hook_event_name: "UserPromptSubmit",
      prompt: "run it",
      session_id: expect.any(String),
    });
    answer(rudder, prompt, {
      hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "ctx-from-host" },
    });
    const pre = await rudder.waitFor((line) => isHookCallback(line, "hook_1"));
    expect(pre.request.input).toMatchObject({
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo should-not-run > ran.txt" },
    });
    expect(pre.request.tool_use_id).toBe(pre.request.input.tool_use_id);
    answer(rudder, pre, {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "the host says no",
      },
    });
    const result = await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);

    expect(result).toMatchObject({ is_error: false, result: "blocked, as told" });
    const [first, second] = api.mainRequests();
    expect(JSON.stringify(first?.body.messages)).toContain("ctx-from-host");
    expect(second && lastToolResults(second)).toMatchObject([
      { content: expect.stringContaining("the host says no"), is_error: true },
    ]);
    expect(rudder.ofType("control_request").map((line) => line.request.callback_id)).toEqual([
      "hook_0",
      "hook_1",
    ]);
    expect(rudder.stderr).toContain("hook callbacks for SessionStart are not supported");
    expect(rudder.ofType("control_response")[0]?.response).toMatchObject({
      subtype: "success",
      request_id: "init-1",
    });
  });

  it("one that never answers times out as a warning, and an interrupt cancels one", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "echo first" } } },
      { text: "went on after the timeout" },
      { toolUse: { name: "Bash", input: { command: "echo second" } } },
    ]);
    const rudder = harness.start(harness.sandbox(api));
    initialize(rudder, "init-1", {
      hooks: {
        PreToolUse: [
          { matcher: "Bash", hookCallbackIds: ["hook_slow"], timeout: 0.3 },
          { matcher: "Bash", hookCallbackIds: ["hook_silent"] },
        ],
      },
    });
    rudder.sendUser("first");
    const slow = await rudder.waitFor((line) => isHookCallback(line, "hook_slow"));
    const silent = await rudder.waitFor((line) => isHookCallback(line, "hook_silent"));
    // hook_silent (60 s) would hold the turn; answering it leaves hook_slow to time out.
    answer(rudder, silent, {});
    const cancelled = await rudder.waitFor(
      (line) => line.type === "control_cancel_request" && line.request_id === slow.request_id,
    );
    expect(cancelled).toBeDefined();
    const first = await rudder.waitForResult();
    expect(first).toMatchObject({ is_error: false, result: "went on after the timeout" });
    expect(rudder.stderr).toContain("hook callback for PreToolUse timed out after 0.3s");

    rudder.sendUser("second");
    const pending = await rudder.waitFor((line) => isHookCallback(line, "hook_silent"), 2);
    rudder.send({
      type: "control_request",
      request_id: "stop-1",
      request: { subtype: "interrupt" },
    });
    await rudder.waitFor(
      (line) => line.type === "control_cancel_request" && line.request_id === pending.request_id,
    );
    const second = await rudder.waitForResult(2);
    rudder.end();
    expect(await rudder.exited).toBe(0);
    expect(second).toMatchObject({ is_error: true, subtype: "error_during_execution" });
  });
});

describe("MCP servers sent in initialize", () => {
  it("start before the first turn, even one sent before initialize is answered", async () => {
    const api = await harness.api([
      { toolUse: { name: "mcp__fake__add", input: { a: 40, b: 2 } } },
      { text: "It is 42." },
    ]);
    const rudder = harness.start(harness.sandbox(api), [...STREAM_ARGS, "--await-initialize"]);
    rudder.sendUser("add 40 and 2");
    initialize(rudder, "init-1", {
      mcpServers: {
        fake: { command: process.execPath, args: [FAKE_MCP_SERVER] },
        remote: { type: "http", url: "http://127.0.0.1:1/mcp" },
      },
      sdkMcpServers: ["in-process"],
    });
    rudder.send({
      type: "control_request",
      request_id: "allow-1",
      request: { subtype: "set_permission_mode", mode: "bypassPermissions" },
    });
    // This host has no such server: it refuses the relayed MCP initialize.
    const relayed = await rudder.waitFor(
      (line) => line.type === "control_request" && line.request.subtype === "mcp_message",
    );
    expect(relayed.request).toMatchObject({
      server_name: "in-process",
      message: { jsonrpc: "2.0", method: "initialize" },
    });
    rudder.send({
      type: "control_response",
      response: { subtype: "error", request_id: relayed.request_id, error: "no such server" },
    });
    const result = await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);

    const init = rudder
      .ofType("control_response")
      .find((line) => line.response.request_id === "init-1");
    expect(init?.response.response).toMatchObject({ mcp_servers_applied: true });
    expect(rudder.ofType("system", "init")[0]).toMatchObject({
      mcp_servers: [
        { name: "fake", status: "connected" },
        { name: "in-process", status: "failed" },
      ],
    });
    expect(rudder.ofType("system", "init")[0]?.tools).toContain("mcp__fake__add");
    expect(result).toMatchObject({ is_error: false, result: "It is 42." });
    const second = api.mainRequests()[1];
    expect(second && lastToolResults(second)).toMatchObject([{ content: "42" }]);
    expect(rudder.stderr).toContain('MCP server "remote" has type "http"');
    expect(rudder.stderr).toContain('MCP server "in-process"');
    expect(rudder.stderr).toContain("no such server");
  });
});
