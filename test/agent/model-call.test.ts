/**
 * The gate's bash grammar starts loading as the model's reply begins a bash tool call (before
 * its command has streamed in), so judging that command does not wait for the whole load.
 */
import { describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import type { Model, ModelOutcome } from "../../src/model/types.js";
import { waitFor } from "../helpers/wait-for.js";

describe("callModel", () => {
  it("loads the bash grammar while a Bash call is still streaming in", async () => {
    // Fresh modules: the unit lane's workers keep what earlier files loaded (the grammar too).
    vi.resetModules();
    const { callModel } = await import("../../src/agent/model-call.js");
    const { bashParser } = await import("../../src/permissions/bash-parser.js");
    const { toolsForSurface } = await import("../../src/tools/claude-code-tools.js");
    const { createDefaultTools } = await import("../../src/tools/default-tools.js");
    const parserLoaded = (): boolean => {
      try {
        bashParser();
        return true;
      } catch {
        return false;
      }
    };
    // Claude Code's names: `Bash` serves rudder's bash, and is judged as bash.
    const tools = toolsForSurface(createDefaultTools(), "claude");
    expect(parserLoaded()).toBe(false);
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
    // The reply announces its Bash block, then ends only once the grammar has loaded: nothing
    // but the announcement can have started the load.
    const model: Model = {
      name: "announcing",
      async complete(request) {
        request.onToolUseStart?.("Read");
        request.onToolUseStart?.("Bash");
        await waitFor(parserLoaded, "the bash grammar to load during the reply");
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
    expect(parserLoaded()).toBe(true);
  });
});
