import { describe, expect, it } from "vitest";
import { StreamJsonEventMapper } from "../../src/gateway/agents/stream-json-events.js";
import { EventBus } from "../../src/gateway/event-bus.js";

describe("mapping stream-json lines to agent events", () => {
  it("maps a hook that failed (hook_response, rudder's or Claude Code's) to hook_warning, not one that succeeded", () => {
    const mapper = new StreamJsonEventMapper();
    const base = { type: "system", subtype: "hook_response", hook_id: "h", uuid: "u" };
    expect(
      mapper.map({
        ...base,
        hook_name: "PreToolUse",
        hook_event: "PreToolUse",
        output: 'hook "sleep 9" timed out after 1s',
        stdout: "",
        stderr: 'hook "sleep 9" timed out after 1s',
        outcome: "error",
      }),
    ).toEqual([
      { type: "hook_warning", event: "PreToolUse", message: 'hook "sleep 9" timed out after 1s' },
    ]);
    // As Claude Code 2.1.328 writes a PreToolUse hook past its timeout.
    expect(
      mapper.map({
        ...base,
        hook_name: "PreToolUse:Bash",
        hook_event: "PreToolUse",
        output: "",
        stdout: "",
        stderr: "",
        exit_code: 1,
        outcome: "cancelled",
      }),
    ).toEqual([
      {
        type: "hook_warning",
        event: "PreToolUse",
        message: "hook PreToolUse:Bash did not finish: it timed out or was stopped",
      },
    ]);
    expect(
      mapper.map({
        ...base,
        hook_name: "Stop",
        hook_event: "Stop",
        output: "ok",
        outcome: "success",
      }),
    ).toEqual([]);
  });

  it("maps text, tool calls, tool results, task notifications and results", () => {
    const mapper = new StreamJsonEventMapper();
    const events = [
      { type: "system", subtype: "init", session_id: "s" },
      {
        type: "assistant",
        message: {
          content: [
            { type: "text", text: "Let me look." },
            { type: "tool_use", id: "tool-1", name: "Bash", input: { command: "ls" } },
          ],
        },
      },
      {
        type: "user",
        message: {
          content: [
            {
              type: "tool_result",
              tool_use_id: "tool-1",
              content: [{ type: "text", text: "a.txt" }],
            },
          ],
        },
      },
      {
        type: "system",
        subtype: "task_notification",
        task_id: "t1",
        status: "completed",
        summary: "done",
      },
      {
        type: "result",
        subtype: "success",
        is_error: false,
        result: "All done",
        num_turns: 2,
        duration_ms: 12,
        total_cost_usd: 0.5,
        usage: { input_tokens: 4, output_tokens: 2 },
      },
      "not an object",
      { type: "command_lifecycle" },
    ].flatMap((line) => mapper.map(line));
    expect(events).toEqual([
      { type: "text_delta", text: "Let me look." },
      { type: "tool_start", toolUseId: "tool-1", name: "Bash", input: { command: "ls" } },
      { type: "tool_end", toolUseId: "tool-1", name: "Bash", content: "a.txt", isError: false },
      {
        type: "task_end",
        taskId: "t1",
        command: "",
        status: "completed",
        exitCode: null,
        summary: "done",
      },
      {
        type: "turn_end",
        outcome: expect.objectContaining({
          result: "All done",
          isError: false,
          subtype: "success",
          numTurns: 2,
          durationMs: 12,
          totalCostUsd: 0.5,
          usage: {
            input_tokens: 4,
            output_tokens: 2,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        }),
      },
    ]);
  });

  it("does not repeat a text block that already streamed as deltas", () => {
    const mapper = new StreamJsonEventMapper();
    const delta = (text: string) => ({
      type: "stream_event",
      event: { type: "content_block_delta", delta: { type: "text_delta", text } },
    });
    const events = [
      delta("Hel"),
      delta("lo"),
      { type: "assistant", message: { content: [{ type: "text", text: "Hello" }] } },
      { type: "assistant", message: { content: [{ type: "text", text: "Unstreamed" }] } },
    ].flatMap((line) => mapper.map(line));
    expect(events).toEqual([
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo" },
      { type: "text_delta", text: "Unstreamed" },
    ]);
  });
});

describe("the event bus", () => {
  it("numbers events per channel and replays a bounded buffer after an id", () => {
    const bus = new EventBus({ bufferSize: 3 });
    for (const text of ["a", "b", "c", "d"])
      bus.publish({ type: "text_delta", text, channelId: "x" });
    bus.publish({ type: "text_delta", text: "other", channelId: "y" });
    // The first event is gone: a replay from the start says so (as its id 1) before the rest.
    const replayed = bus.replay("x");
    expect(replayed.map((numbered) => numbered.id)).toEqual([1, 2, 3, 4]);
    expect(replayed[0]?.event).toMatchObject({ type: "events_dropped", through: 1 });
    expect(bus.replay("x", 3).map((numbered) => numbered.id)).toEqual([4]);
    expect(bus.replay("x", 99).map((numbered) => numbered.id)).toEqual([1, 2, 3, 4]);
    expect(bus.replay("y").map((numbered) => numbered.id)).toEqual([1]);
    const seen: number[] = [];
    const unsubscribe = bus.subscribe("x", (numbered) => seen.push(numbered.id), 3);
    bus.publish({ type: "text_delta", text: "e", channelId: "x" });
    unsubscribe();
    bus.publish({ type: "text_delta", text: "f", channelId: "x" });
    expect(seen).toEqual([4, 5]);
    expect(bus.listenerCount("x")).toBe(0);
  });
});
