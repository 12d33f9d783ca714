/**
 * The gate's bash grammar starts loading as soon as a bash command streaming in shows shell
 * syntax (before the rest has streamed in), so judging it does not wait for the whole load;
 * a command of plain words, which the gate reads without the grammar, never loads it.
 */
import { describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import type { Model, ModelOutcome } from "../../src/model/types.js";
import { waitFor } from "../helpers/wait-for.js";

describe("callModel", () => {
  it("loads the bash grammar while a Bash call with shell syntax is still streaming in", async () => {
    // Fresh modules: the unit lane's workers keep what earlier files loaded (the grammar too).
    vi.resetModules();
    const { callModel } = await import("../../src/agent/model-call.js");
    const { bashParserStatus } = await import("../../src/permissions/bash-parser.js");
    const { toolsForSurface } = await import("../../src/tools/claude-code-tools.js");
    const { createDefaultTools } = await import("../../src/tools/default-tools.js");
    // Claude Code's names: `Bash` serves rudder's bash, and is judged as bash.
    const tools = toolsForSurface(createDefaultTools(), "claude");
    expect(bashParserStatus()).toBe("not loaded");
    const outcome: ModelOutcome = {
      ok: true,
      response: {
        id: "msg_1",
        content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }],
        stopReason: "tool_use",
        usage: {
          input_tokens: 1,
          output_tokens: 1,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    };
    const seen: string[] = [];
    // The reply streams a Read call (whose path has syntax-like characters), then a Bash
    // command of plain words, then one with a pipe, and ends only once the grammar has loaded.
    const model: Model = {
      name: "streaming",
      async complete(request) {
        request.onToolInput?.("Read", "");
        request.onToolInput?.("Read", '{"file_path": "/a b/$x|y"}');
        request.onToolInput?.("Bash", "");
        request.onToolInput?.("Bash", '{"description": "a | b", "comm');
        request.onToolInput?.("Bash", '{"description": "a | b", "command": "git log --onel');
        request.onToolInput?.(
          "Bash",
          '{"description": "a | b", "command": "git log --oneline -5"}',
        );
        seen.push(bashParserStatus());
        request.onToolInput?.("Bash", "");
        request.onToolInput?.("Bash", '{"command": "git log | he');
        seen.push(bashParserStatus());
        await waitFor(() => bashParserStatus() === "loaded", "the bash grammar to load");
        return outcome;
      },
    };
    const events: AgentEvent[] = [];
    const { reply } = await callModel([{ role: "user", content: "list" }], { tools: [] }, 1, {
      model,
      tools,
      emit: (event) => events.push(event),
      signal: new AbortController().signal,
    });
    expect(reply).toEqual(outcome);
    expect(seen).toEqual(["not loaded", "loading"]);
  });

  it("starts the load at a quote or backslash escape in the streamed command", async () => {
    vi.resetModules();
    const { callModel } = await import("../../src/agent/model-call.js");
    const { bashParserStatus } = await import("../../src/permissions/bash-parser.js");
    const { createDefaultTools } = await import("../../src/tools/default-tools.js");
    const model: Model = {
      name: "escaped",
      async complete(request) {
        request.onToolInput?.("bash", '{"command": "echo \\');
        await waitFor(() => bashParserStatus() === "loaded", "the bash grammar to load");
        return {
          ok: true,
          response: {
            id: "m",
            content: [],
            stopReason: "end_turn",
            usage: {
              input_tokens: 0,
              output_tokens: 0,
              cache_creation_input_tokens: 0,
              cache_read_input_tokens: 0,
            },
          },
        };
      },
    };
    await callModel([{ role: "user", content: "x" }], { tools: [] }, 1, {
      model,
      tools: createDefaultTools(),
      emit: () => {},
      signal: new AbortController().signal,
    });
    expect(bashParserStatus()).toBe("loaded");
  });
});
