import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { AgentEvent, TurnOutcome } from "../../src/agent/events.js";
import { ChatRenderer } from "../../src/cli/chat/chat-renderer.js";
import { ChatScreen, displayWidth } from "../../src/cli/chat/chat-screen.js";
import { emptyUsage } from "../../src/model/types.js";

class Transcript extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString("utf8");
    callback();
  }
}

function outcome(fields: Partial<TurnOutcome>): TurnOutcome {
  return {
    result: "",
    isError: false,
    subtype: "success",
    numTurns: 1,
    durationMs: 5,
    usage: emptyUsage(),
    totalCostUsd: 0,
    terminalReason: "completed",
    ...fields,
  };
}

function render(events: AgentEvent[]): string {
  const output = new Transcript();
  const renderer = new ChatRenderer(new ChatScreen({ output }));
  for (const event of events) renderer.handle(event);
  return output.text;
}

describe("chat renderer, plain output", () => {
  it("streams text, ends its line before a tool call, shows one line per call and outcome", () => {
    const text = render([
      { type: "turn_start", prompt: "go" },
      { type: "model_start", call: 1 },
      { type: "text_delta", text: "Looking " },
      { type: "text_delta", text: "around." },
      {
        type: "model_end",
        message: { role: "assistant", content: [] },
        messageId: "m1",
        usage: emptyUsage(),
      },
      { type: "tool_start", toolUseId: "t1", name: "glob", input: { pattern: "*.md" } },
      { type: "tool_end", toolUseId: "t1", name: "glob", content: "a.md\nb.md\n", isError: false },
      { type: "tool_start", toolUseId: "t2", name: "read_file", input: { path: "nope" } },
      {
        type: "tool_end",
        toolUseId: "t2",
        name: "read_file",
        content: "Error: file not found: nope",
        isError: true,
      },
      { type: "turn_end", outcome: outcome({}) },
    ]);
    expect(text).toBe(
      [
        "> ",
        "Looking around.",
        "  > glob  *.md",
        "  ok (2 lines)",
        "  > read_file  nope",
        "  error: Error: file not found: nope",
        "> ",
      ].join("\n"),
    );
  });

  it("shows denials, background starts, retries, hook warnings and failed turns", () => {
    const text = render([
      { type: "turn_start", prompt: "go" },
      {
        type: "model_retry",
        attempt: 1,
        delayMs: 1500,
        status: 529,
        message: "overloaded",
      },
      { type: "tool_start", toolUseId: "t1", name: "bash", input: { command: "sudo ls" } },
      { type: "permission_denied", toolUseId: "t1", name: "bash", reason: "sudo is denied" },
      {
        type: "tool_end",
        toolUseId: "t1",
        name: "bash",
        content: "Permission denied: sudo is denied",
        isError: true,
      },
      {
        type: "tool_start",
        toolUseId: "t2",
        name: "bash",
        input: { command: "make", run_in_background: true },
      },
      { type: "task_start", taskId: "bg_0001", command: "make", toolUseId: "t2" },
      { type: "tool_end", toolUseId: "t2", name: "bash", content: "Started", isError: false },
      { type: "hook_warning", event: "PreToolUse", message: "hook timed out" },
      {
        type: "task_end",
        taskId: "bg_0001",
        command: "make",
        status: "failed",
        exitCode: 2,
        summary: "",
      },
      {
        type: "turn_end",
        outcome: outcome({ isError: true, subtype: "rate_limit", result: "429 slow down" }),
      },
    ]);
    expect(text).toBe(
      [
        "> ",
        "  (model call failed: overloaded; retry 1 in 2s)",
        "  > bash  sudo ls",
        "  denied: sudo is denied",
        "  > bash  make (background)",
        "  started bg_0001 in the background",
        "  hook warning (PreToolUse): hook timed out",
        "[bg_0001 failed] make",
        "  error (rate_limit): 429 slow down",
        "> ",
      ].join("\n"),
    );
  });

  it("an idle notice keeps the prompt after it", () => {
    const text = render([
      {
        type: "task_end",
        taskId: "bg_0003",
        command: "npm test",
        status: "completed",
        exitCode: 0,
        summary: "",
      },
    ]);
    expect(text).toBe("> \n[bg_0003 completed] npm test\n> ");
  });

  it("measures display width without terminal escapes", () => {
    expect(displayWidth("\u001b[2m> \u001b[0mabc")).toBe(5);
    expect(displayWidth("caf\u00e9")).toBe(4);
  });
});
