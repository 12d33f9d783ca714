import { describe, expect, it } from "vitest";
import { createHookRunner } from "../../src/hooks/hook-registry.js";
import { jsonHookCallback } from "../../src/hooks/json-hook-callback.js";
import { hookInput, preToolUse } from "./helpers.js";

const signal = new AbortController().signal;
const cwd = "/work/project";

describe("jsonHookCallback", () => {
  it("sends Claude Code's input and reads the answer as a command hook's JSON", async () => {
    const seen: Record<string, unknown>[] = [];
    const hooks = createHookRunner({ cwd });
    hooks.on(
      "PreToolUse",
      jsonHookCallback("hook callback one", async (input) => {
        seen.push(input);
        return {
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: "no reading",
            additionalContext: "reads are audited",
          },
        };
      }),
      "Read",
    );
    const outcome = await hooks.run(
      { ...preToolUse(cwd, "read_file", { path: "notes.txt" }), tool_use_id: "toolu_1" },
      signal,
    );
    expect(seen).toEqual([
      expect.objectContaining({
        hook_event_name: "PreToolUse",
        tool_name: "Read",
        tool_input: expect.objectContaining({ file_path: "/work/project/notes.txt" }),
        tool_use_id: "toolu_1",
      }),
    ]);
    expect(outcome).toMatchObject({
      blocked: true,
      reason: "no reading",
      permissionDecision: "deny",
      additionalContext: ["reads are audited"],
    });
  });

  it("maps updatedInput back to rudder's field names", async () => {
    const hooks = createHookRunner({ cwd });
    hooks.on(
      "PreToolUse",
      jsonHookCallback("hook callback two", async () => ({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          updatedInput: { file_path: "/work/project/other.txt" },
        },
      })),
    );
    const outcome = await hooks.run(preToolUse(cwd, "read_file", { path: "notes.txt" }), signal);
    expect(outcome.permissionDecision).toBe("allow");
    expect(outcome.updatedInput).toEqual({ path: "/work/project/other.txt" });
  });

  it("a permissionDecision of defer leaves the decision to the rules", async () => {
    const hooks = createHookRunner({ cwd });
    hooks.on(
      "PreToolUse",
      jsonHookCallback("hook callback defer", async () => ({
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer" },
      })),
    );
    const outcome = await hooks.run(preToolUse(cwd, "bash", { command: "ls" }), signal);
    expect(outcome).toEqual({ blocked: false, additionalContext: [], warnings: [] });
  });

  it("halts on continue: false and warns about a wrong shape or a failed call", async () => {
    const hooks = createHookRunner({ cwd });
    hooks.on(
      "UserPromptSubmit",
      jsonHookCallback("hook callback halt", async () => ({
        continue: false,
        stopReason: "quota",
      })),
    );
    hooks.on(
      "UserPromptSubmit",
      jsonHookCallback("hook callback shape", async () => ({ decision: "maybe" })),
    );
    hooks.on(
      "UserPromptSubmit",
      jsonHookCallback("hook callback broken", async () => {
        throw new Error("the host answered with an error");
      }),
    );
    const outcome = await hooks.run(hookInput(cwd, "UserPromptSubmit", { prompt: "hi" }), signal);
    expect(outcome.halt).toEqual({ reason: "quota" });
    expect(outcome.warnings).toEqual([
      expect.stringContaining("hook callback shape answered JSON of the wrong shape (decision:"),
      "hook callback broken failed: the host answered with an error",
    ]);
    expect(outcome.blocked).toBe(false);
  });

  it("with blockOnFailure, a failed call or a wrong shape blocks (but never a Stop)", async () => {
    const hooks = createHookRunner({ cwd });
    const broken = jsonHookCallback(
      "hook callback strict",
      async () => {
        throw new Error("the host is gone");
      },
      { blockOnFailure: true },
    );
    hooks.on("PreToolUse", broken);
    hooks.on("Stop", broken);
    hooks.on(
      "UserPromptSubmit",
      jsonHookCallback("hook callback odd", async () => ({ continue: "yes" }), {
        blockOnFailure: true,
      }),
    );
    const pre = await hooks.run(preToolUse(cwd, "bash", { command: "ls" }), signal);
    expect(pre).toMatchObject({
      blocked: true,
      permissionDecision: "deny",
      reason: "hook callback strict failed: the host is gone",
    });
    const prompt = await hooks.run(hookInput(cwd, "UserPromptSubmit", { prompt: "hi" }), signal);
    expect(prompt.blocked).toBe(true);
    const stop = await hooks.run(hookInput(cwd, "Stop"), signal);
    expect(stop.blocked).toBe(false);
    expect(stop.warnings).toEqual(["hook callback strict failed: the host is gone"]);
  });

  it("a callback's own timeout replaces the default, as a warning, and aborts its call", async () => {
    const hooks = createHookRunner({ cwd });
    let callSignal: AbortSignal | undefined;
    hooks.on(
      "Stop",
      jsonHookCallback("hook callback slow", (_input, abort) => {
        callSignal = abort;
        return new Promise(() => {});
      }),
      undefined,
      { timeoutSeconds: 0.05 },
    );
    const outcome = await hooks.run(hookInput(cwd, "Stop"), signal);
    expect(outcome.warnings).toEqual(["hook callback for Stop timed out after 0.05s"]);
    expect(callSignal?.aborted).toBe(true);
  });
});
