import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lastUserText } from "../helpers/fake-messages-api.js";
import { processesMatching } from "../helpers/process-scan.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import { protocolHarness, STREAM_ARGS, writeSettings } from "./helpers.js";

const harness = protocolHarness();
afterEach(() => harness.cleanup());

const FIRST = "11111111-1111-4111-8111-111111111111";
const SECOND = "22222222-2222-4222-8222-222222222222";

describe("rudder speaks Claude Code's stream-json", () => {
  it("answers a turn with init, one assistant line per block, tool results, result and lifecycle", async () => {
    const api = await harness.api([
      { text: "Running it", toolUse: { name: "Bash", input: { command: "echo hi" } } },
      { text: "Done" },
    ]);
    const rudder = harness.start(harness.sandbox(api));
    rudder.sendUser("say hi", FIRST);
    const result = await rudder.waitForResult();
    const completed = await rudder.waitFor(
      (line) => line.type === "command_lifecycle" && line.state === "completed",
    );
    rudder.end();
    expect(await rudder.exited).toBe(0);

    const kinds = rudder.lines.map((line) =>
      line.type === "command_lifecycle"
        ? `lifecycle:${line.state}`
        : `${line.type}/${line.subtype ?? ""}`,
    );
    expect(kinds).toEqual([
      "lifecycle:queued",
      "lifecycle:started",
      "system/init",
      "assistant/",
      "assistant/",
      "user/",
      "assistant/",
      "result/success",
      "lifecycle:completed",
    ]);
    const init = rudder.ofType("system", "init")[0];
    expect(init).toMatchObject({
      session_id: result.session_id,
      cwd: expect.any(String),
      model: expect.any(String),
      permissionMode: "default",
    });
    expect(init?.tools).toContain("Bash");
    const [text, toolUse, final] = rudder.ofType("assistant");
    expect(text?.message.content).toEqual([{ type: "text", text: "Running it" }]);
    expect(toolUse?.message.content[0]).toMatchObject({ type: "tool_use", name: "Bash" });
    expect(text?.message.id).toBe(toolUse?.message.id);
    expect(final?.message.id).not.toBe(text?.message.id);
    const toolResult = rudder.ofType("user")[0]?.message.content[0];
    expect(toolResult).toMatchObject({
      type: "tool_result",
      tool_use_id: toolUse?.message.content[0].id,
      content: "hi\n",
      is_error: false,
    });
    expect(result).toMatchObject({
      subtype: "success",
      is_error: false,
      result: "Done",
      num_turns: 2,
      terminal_reason: "completed",
      api_error_status: null,
      user_message_uuids: [FIRST],
    });
    expect(result.duration_ms).toEqual(expect.any(Number));
    expect(result.total_cost_usd).toEqual(expect.any(Number));
    expect(result.usage.input_tokens).toBeGreaterThan(0);
    expect(completed.command_uuid).toBe(FIRST);
  });

  it("answers initialize, refuses unknown control requests, and survives a malformed line", async () => {
    const api = await harness.api([{ text: "still here" }]);
    const rudder = harness.start(harness.sandbox(api));
    rudder.send({
      type: "control_request",
      request_id: "init-1",
      request: { subtype: "initialize" },
    });
    rudder.send("{this is not json");
    rudder.send({
      type: "control_request",
      request_id: "odd-1",
      request: { subtype: "frobnicate" },
    });
    rudder.send({ type: "mystery" });
    rudder.sendUser("are you alive?");
    const result = await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);

    const responses = rudder.ofType("control_response").map((line) => line.response);
    expect(responses[0]).toMatchObject({ subtype: "success", request_id: "init-1" });
    expect(responses[0].response).toMatchObject({
      commands: [],
      current_permission_mode: "default",
    });
    expect(responses[1]).toEqual({
      subtype: "error",
      request_id: "odd-1",
      error: "Unsupported control request subtype: frobnicate",
      error_code: "unsupported_request",
    });
    expect(rudder.ofType("system", "input_error")).toHaveLength(2);
    expect(result).toMatchObject({ is_error: false, result: "still here" });
    expect(rudder.stderr).toContain("skipped an input line");
  });

  it("folds a message sent while a tool runs into the running turn: one result", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "while [ ! -f go ]; do sleep 0.02; done" } } },
      { text: "Both answered" },
    ]);
    const sandbox = harness.sandbox(api);
    const rudder = harness.start(sandbox);
    rudder.sendUser("start the tool", FIRST);
    await rudder.waitFor((line) => line.type === "assistant");
    rudder.sendUser("and also this", SECOND);
    await rudder.waitFor((line) => line.command_uuid === SECOND && line.state === "queued");
    writeFileSync(join(sandbox.workspace, "go"), "");
    const result = await rudder.waitForResult();
    await rudder.waitFor((line) => line.command_uuid === SECOND && line.state === "completed");
    rudder.end();
    expect(await rudder.exited).toBe(0);

    expect(rudder.ofType("result")).toHaveLength(1);
    expect(result).toMatchObject({ result: "Both answered", num_turns: 2 });
    expect(result.user_message_uuids).toEqual([FIRST, SECOND]);
    const states = rudder
      .ofType("command_lifecycle")
      .filter((line) => line.command_uuid === SECOND)
      .map((line) => line.state);
    expect(states).toEqual(["queued", "started", "completed"]);
    const second = api.mainRequests()[1];
    expect(second && lastUserText(second)).toContain("and also this");
  });

  it("stops at once, in one line, when the host stops reading its output", async () => {
    const api = await harness.api([
      {
        delayMs: 1500,
        // biome-ignore lint/suspicious/noThenProperty: the fake API names its delayed step so
        then: { toolUse: { name: "Bash", input: { command: "sleep 2.517 && touch late.txt" } } },
      },
      { text: "nobody reads this" },
    ]);
    const sandbox = harness.sandbox(api);
    const rudder = harness.start(sandbox);
    rudder.sendUser("go", FIRST);
    await api.waitForMainRequests(1);
    // The host goes away: rudder's next line (the reply's tool call) meets EPIPE.
    rudder.child.stdout?.destroy();
    expect(await rudder.exited).toBe(1);
    expect(rudder.stderr).toContain(
      "rudder: stopping: the host stopped reading the output (EPIPE)",
    );
    expect(rudder.stderr).not.toMatch(/^\s+at /m);
    // Its tool was killed with it, and the model was not asked again. rudder has exited, so
    // nothing can start the tool now; once no process carries its command (the shell, the sleep,
    // a sandbox around them), nothing is left that could write late.txt, and no wait for the
    // sleep's 2.5 s is needed to show that it never will.
    await waitFor(
      () => processesMatching("sleep 2.517").length === 0,
      () => `the tool's processes to be gone: ${processesMatching("sleep 2.517").join(", ")}`,
      5000,
    );
    expect(existsSync(join(sandbox.workspace, "late.txt"))).toBe(false);
    expect(api.mainRequests()).toHaveLength(1);
  });

  it("interrupt aborts the turn, kills its tool, answers, and the next message still works", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "exec sleep 60.101" } } },
      { text: "after the interrupt" },
    ]);
    const sandbox = harness.sandbox(api);
    const rudder = harness.start(sandbox);
    rudder.sendUser("run something long", FIRST);
    // The tool's own `sleep`: the first match was once a shell or bubblewrap process whose
    // arguments name it, gone a moment later (isAlive false in a loaded run).
    const toolPid = await waitFor(
      () => processesMatching("sleep 60.101").find((pid) => commandOf(pid) === "sleep 60.101"),
      "the tool's sleep",
    );
    expect(isAlive(toolPid)).toBe(true);

    rudder.send({
      type: "control_request",
      request_id: "stop-1",
      request: { subtype: "interrupt" },
    });
    const answer = await rudder.waitFor((line) => line.type === "control_response");
    expect(answer.response).toMatchObject({ subtype: "success", request_id: "stop-1" });
    const interrupted = await rudder.waitForResult();
    expect(interrupted).toMatchObject({
      is_error: true,
      subtype: "error_during_execution",
      terminal_reason: "aborted_tools",
    });
    expect(rudder.ofType("user").at(-1)?.message).toEqual({
      role: "user",
      content: [{ type: "text", text: "[Request interrupted by user for tool use]" }],
    });
    // A fresh-clone run once timed out here: say what the process was, should it recur.
    await waitFor(() => !isAlive(toolPid)).catch((error: unknown) => {
      throw new Error(
        `${String(error)}: ${describeProcess(toolPid)}; now matching: ${processesMatching("sleep 60.101").map(describeProcess).join(", ")}`,
      );
    });
    await rudder.waitFor((line) => line.command_uuid === FIRST && line.state === "cancelled");

    rudder.sendUser("carry on", SECOND);
    const next = await rudder.waitForResult(2);
    rudder.end();
    expect(await rudder.exited).toBe(0);
    expect(next).toMatchObject({ is_error: false, result: "after the interrupt" });
    // As Claude Code sends it: the cancelled tool's result, the marker, then the new prompt.
    const last = api.mainRequests()[1]?.body.messages.at(-1);
    expect(
      last.content.map((block: { type: string; text?: string }) => block.text ?? block.type),
    ).toEqual(["tool_result", "[Request interrupted by user for tool use]", "carry on"]);
  });

  it("an interrupt while the model streams keeps what it said, then the marker", async () => {
    const api = await harness.api([
      { hangUntilAborted: true, text: "partial answer" },
      { text: "second answer" },
    ]);
    const rudder = harness.start(harness.sandbox(api), [
      ...STREAM_ARGS,
      "--include-partial-messages",
    ]);
    rudder.sendUser("first question", FIRST);
    // Interrupt once the partial text has been streamed (the fake API then holds the response).
    const streamedText = () =>
      rudder
        .ofType("stream_event")
        .map((line) => line.event?.delta?.text ?? "")
        .join("");
    await waitFor(() => streamedText() === "partial answer");
    rudder.send({
      type: "control_request",
      request_id: "stop-2",
      request: { subtype: "interrupt" },
    });
    const interrupted = await rudder.waitForResult();
    expect(interrupted).toMatchObject({
      subtype: "error_during_execution",
      terminal_reason: "aborted_streaming",
    });
    const [partial] = rudder.ofType("assistant");
    expect(partial?.message.content).toEqual([{ type: "text", text: "partial answer" }]);
    expect(rudder.ofType("user").at(-1)?.message.content).toEqual([
      { type: "text", text: "[Request interrupted by user]" },
    ]);

    rudder.sendUser("second question", SECOND);
    expect(await rudder.waitForResult(2)).toMatchObject({ result: "second answer" });
    rudder.end();
    expect(await rudder.exited).toBe(0);
    const messages = api.mainRequests()[1]?.body.messages;
    expect(messages).toEqual([
      { role: "user", content: "first question" },
      { role: "assistant", content: [{ type: "text", text: "partial answer" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "[Request interrupted by user]" },
          expect.objectContaining({ type: "text", text: "second question" }),
        ],
      },
    ]);
  });

  it("asks the host with can_use_tool and follows its allow and deny", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "touch allowed.txt" } } },
      { toolUse: { name: "Bash", input: { command: "touch denied.txt" } } },
      { text: "done asking" },
    ]);
    const sandbox = harness.sandbox(api);
    writeSettings(sandbox.workspace, { permissions: { ask: ["Bash(touch:*)"] } });
    const rudder = harness.start(sandbox, [...STREAM_ARGS, "--permission-prompt-tool", "stdio"]);
    rudder.sendUser("make two files");

    const first = await rudder.waitFor((line) => line.type === "control_request");
    expect(first.request).toMatchObject({
      subtype: "can_use_tool",
      tool_name: "Bash",
      input: { command: "touch allowed.txt" },
      tool_use_id: expect.any(String),
    });
    rudder.send({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: first.request_id,
        response: { behavior: "allow", updatedInput: first.request.input },
      },
    });
    const second = await rudder.waitFor((line) => line.type === "control_request", 2);
    rudder.send({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: second.request_id,
        response: { behavior: "deny", message: "not that one" },
      },
    });
    const result = await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);

    expect(existsSync(join(sandbox.workspace, "allowed.txt"))).toBe(true);
    expect(existsSync(join(sandbox.workspace, "denied.txt"))).toBe(false);
    const toolResults = rudder.ofType("user").map((line) => line.message.content[0]);
    expect(toolResults[1]).toMatchObject({ is_error: true });
    expect(toolResults[1].content).toContain("Permission denied");
    expect(result.permission_denials).toEqual([
      {
        tool_name: "Bash",
        tool_use_id: second.request.tool_use_id,
        tool_input: { command: "touch denied.txt" },
      },
    ]);
  });

  it("denies asks without a prompt tool, and bypassPermissions allows them", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "touch one.txt" } } },
      { text: "first" },
      { toolUse: { name: "Bash", input: { command: "touch two.txt" } } },
      { text: "second" },
    ]);
    const sandbox = harness.sandbox(api);
    writeSettings(sandbox.workspace, { permissions: { ask: ["Bash(touch:*)"] } });
    const denied = harness.start(sandbox);
    denied.sendUser("make one");
    await denied.waitForResult();
    denied.end();
    expect(await denied.exited).toBe(0);
    expect(existsSync(join(sandbox.workspace, "one.txt"))).toBe(false);

    const bypass = harness.start(sandbox, [...STREAM_ARGS, "--permission-mode=bypassPermissions"]);
    bypass.sendUser("make two");
    await bypass.waitForResult();
    bypass.end();
    expect(await bypass.exited).toBe(0);
    expect(existsSync(join(sandbox.workspace, "two.txt"))).toBe(true);
    expect(bypass.ofType("control_request")).toHaveLength(0);
    expect(bypass.ofType("system", "init")[0]?.permissionMode).toBe("bypassPermissions");
  });

  it("reports a finished background task and wakes for it after input ends", async () => {
    const api = await harness.api([
      {
        toolUse: {
          name: "Bash",
          input: {
            command: "while [ ! -f go ]; do sleep 0.02; done; echo bg-finished",
            run_in_background: true,
          },
        },
      },
      { text: "started it" },
      { text: "saw the notification" },
    ]);
    const sandbox = harness.sandbox(api);
    const rudder = harness.start(sandbox);
    rudder.sendUser("start a background task", FIRST);
    await rudder.waitForResult();
    rudder.end();
    writeFileSync(join(sandbox.workspace, "go"), "");
    const notification = await rudder.waitFor(
      (line) => line.type === "system" && line.subtype === "task_notification",
    );
    const woken = await rudder.waitForResult(2);
    expect(await rudder.exited).toBe(0);

    expect(rudder.ofType("system", "task_started")[0]).toMatchObject({
      task_id: notification.task_id,
    });
    expect(notification).toMatchObject({
      status: "completed",
      exit_code: 0,
      tool_use_id: expect.any(String),
    });
    expect(woken).toMatchObject({ is_error: false, result: "saw the notification" });
    expect(woken.user_message_uuids).toBeUndefined();
    const third = api.mainRequests()[2];
    expect(third && lastUserText(third)).toContain("bg-finished");
  });

  it("streams text deltas as stream_event lines with --include-partial-messages", async () => {
    const api = await harness.api([{ text: "streamed in pieces", chunks: 3 }]);
    const rudder = harness.start(harness.sandbox(api), [
      ...STREAM_ARGS,
      "--include-partial-messages",
    ]);
    rudder.sendUser("stream please");
    await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);
    const events = rudder.ofType("stream_event").map((line) => line.event);
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const text = events
      .filter((event) => event.type === "content_block_delta")
      .map((event) => event.delta.text)
      .join("");
    expect(text).toBe("streamed in pieces");
  });

  it("one-shot --output-format stream-json prints the same lines for one prompt", async () => {
    const api = await harness.api([{ text: "one shot answer" }]);
    const rudder = harness.start(harness.sandbox(api), [
      "run",
      "--output-format",
      "stream-json",
      "--verbose",
      "answer once",
    ]);
    expect(await rudder.exited).toBe(0);
    expect(rudder.lines.map((line) => line.type)).toEqual(["system", "assistant", "result"]);
    expect(rudder.ofType("result")[0]).toMatchObject({
      result: "one shot answer",
      is_error: false,
    });
  });

  it("reports a failed API call as Claude Code does: success, is_error, api_error", async () => {
    // Claude Code 2.1.328 against the same 429 / 500 answers (RUDDER_MAX_RETRIES=0 there too):
    // {"subtype":"success","is_error":true,"api_error_status":429,"terminal_reason":"api_error"}
    // and exit 1.
    for (const status of [429, 500]) {
      const api = await harness.api([{ error: { status, message: `failed with ${status}` } }]);
      const rudder = harness.start(harness.sandbox(api), [
        "run",
        "--output-format",
        "stream-json",
        "--verbose",
        "hi",
      ]);
      expect(await rudder.exited).toBe(1);
      const [result] = rudder.ofType("result");
      expect(result).toMatchObject({
        subtype: "success",
        is_error: true,
        api_error_status: status,
        terminal_reason: "api_error",
      });
      expect(String(result?.result)).toContain(`failed with ${status}`);
    }
  });

  it("accepts --flag=value and ignores flags it has no use for, with a note", async () => {
    const api = await harness.api([{ text: "fine" }]);
    const rudder = harness.start(harness.sandbox(api), [
      "--output-format=stream-json",
      "--verbose",
      "--input-format=stream-json",
      "--setting-sources=",
      "--mcp-config",
      "{}",
      "--strict-mcp-config",
      "--max-thinking-tokens=100",
    ]);
    rudder.sendUser("hello");
    await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);
    expect(rudder.stderr).toMatch(
      /ignoring options rudder has no use for: .*--max-thinking-tokens/,
    );
    expect(rudder.stderr).not.toContain("--mcp-config");
  });

  it("applies an allow that changes the input, a deny's message, and a deny with interrupt", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "touch original.txt" } } },
      { toolUse: { name: "Bash", input: { command: "touch second.txt" } } },
      { toolUse: { name: "Bash", input: { command: "touch third.txt" } } },
      { text: "never reached" },
    ]);
    const sandbox = harness.sandbox(api);
    writeSettings(sandbox.workspace, { permissions: { ask: ["Bash(touch:*)"] } });
    const rudder = harness.start(sandbox, [...STREAM_ARGS, "--permission-prompt-tool=stdio"]);
    rudder.sendUser("make files");
    const answers = [
      { behavior: "allow", updatedInput: { command: "touch changed.txt" } },
      { behavior: "deny", message: "use a better name" },
      { behavior: "deny", message: "stop everything", interrupt: true },
    ];
    for (const [index, response] of answers.entries()) {
      const request = await rudder.waitFor((line) => line.type === "control_request", index + 1);
      rudder.send({
        type: "control_response",
        response: { subtype: "success", request_id: request.request_id, response },
      });
    }
    const result = await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);
    expect(result).toMatchObject({ is_error: true, subtype: "error_during_execution" });
    expect(existsSync(join(sandbox.workspace, "original.txt"))).toBe(false);
    expect(existsSync(join(sandbox.workspace, "changed.txt"))).toBe(true);
    expect(existsSync(join(sandbox.workspace, "second.txt"))).toBe(false);
    expect(existsSync(join(sandbox.workspace, "third.txt"))).toBe(false);
    expect(JSON.stringify(api.mainRequests()[2]?.body.messages)).toContain("use a better name");
    expect(api.mainRequests()).toHaveLength(3);
  });

  it("set_permission_mode changes how later asks are answered", async () => {
    const api = await harness.api([
      { toolUse: { name: "Bash", input: { command: "touch later.txt" } } },
      { text: "made it" },
    ]);
    const sandbox = harness.sandbox(api);
    writeSettings(sandbox.workspace, { permissions: { ask: ["Bash(touch:*)"] } });
    const rudder = harness.start(sandbox);
    rudder.send({
      type: "control_request",
      request_id: "mode-1",
      request: { subtype: "set_permission_mode", mode: "bypassPermissions" },
    });
    rudder.send({
      type: "control_request",
      request_id: "mode-2",
      request: { subtype: "set_permission_mode", mode: "yolo" },
    });
    rudder.sendUser("make it");
    await rudder.waitForResult();
    rudder.end();
    expect(await rudder.exited).toBe(0);
    const responses = rudder.ofType("control_response").map((line) => line.response);
    expect(responses[0]).toMatchObject({ subtype: "success", request_id: "mode-1" });
    expect(responses[1]).toMatchObject({ subtype: "error", request_id: "mode-2" });
    expect(existsSync(join(sandbox.workspace, "later.txt"))).toBe(true);
  });
});

/** A process as /proc has it (state and parent from `stat`, and its command line), for errors. */
/** The command line of `pid`, its arguments joined by spaces; empty once it is gone. */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
}

function describeProcess(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return `pid ${pid} state ${state} parent ${parent} "${commandOf(pid)}"`;
  } catch {
    return `pid ${pid} gone`;
  }
}
