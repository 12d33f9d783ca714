/**
 * The seed test `test_background_tasks.py`, ported assertion for assertion
 * (names translated to TypeScript).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runAgentLoop } from "../../src/agent/agent-loop.js";
import { BackgroundManager, shouldRunBackground } from "../../src/background/background-manager.js";
import { HOOK_EVENTS } from "../../src/hooks/types.js";
import { createScriptedModel, textReply, toolUseReply } from "../../src/model/scripted-model.js";
import type { Message } from "../../src/model/types.js";
import { createDefaultTools } from "../../src/tools/default-tools.js";
import { waitFor } from "../helpers/wait-for.js";
import {
  cleanUpAfterEachTest,
  loopDependencies,
  makeBackground,
  makeWorkspace,
} from "./kernel-helpers.js";

cleanUpAfterEachTest();

describe("seed: background tasks kernel", () => {
  it("keeps the kernel's five tools and adds one bash option", async () => {
    const tools = createDefaultTools();
    expect(new Set(tools.map((tool) => tool.name))).toEqual(
      new Set(["bash", "read_file", "write_file", "edit_file", "glob"]),
    );
    const bash = tools.find((tool) => tool.name === "bash");
    expect(Object.keys((bash?.jsonSchema.properties ?? {}) as object)).toContain(
      "run_in_background",
    );
    expect(new Set(HOOK_EVENTS)).toEqual(
      new Set(["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]),
    );
    const kernel = {
      ...(await import("../../src/agent/agent-loop.js")),
      ...(await import("../../src/background/background-manager.js")),
    };
    expect("Task" in kernel).toBe(false);
    expect("MEMORY_DIR" in kernel).toBe(false);
  });

  it("runs in the background only with an explicit bash flag", () => {
    expect(shouldRunBackground("bash", { command: "npm install" })).toBe(false);
    expect(shouldRunBackground("bash", { command: "printf ready", run_in_background: true })).toBe(
      true,
    );
    expect(shouldRunBackground("write_file", { run_in_background: true })).toBe(false);
    expect(shouldRunBackground("bash", { command: "x", run_in_background: "true" })).toBe(false);
  });

  it("passes background bash through the permission gate before dispatch", async () => {
    const model = createScriptedModel([
      toolUseReply(
        "bash",
        { command: "rm -rf /tmp/example", run_in_background: true },
        { id: "tool_denied" },
      ),
      { content: "Denied.", stopReason: "end_turn" },
    ]);
    const dependencies = loopDependencies(model);
    const history: Message[] = [{ role: "user", content: "Delete the directory" }];

    await runAgentLoop(history, dependencies);

    expect(dependencies.background.tasks.size).toBe(0);
    const content = history[2]?.content;
    const result = Array.isArray(content) ? content[0] : undefined;
    expect(result?.type).toBe("tool_result");
    expect(result?.type === "tool_result" ? result.content : "").toContain("Permission denied");
  });

  it("collects a completed result once, before a later model call", async () => {
    const workspace = makeWorkspace();
    const background = makeBackground(workspace);
    const taskId = background.start("printf ready", "tool_ready");
    await waitFor(() => background.tasks.get(taskId)?.status === "completed");

    const model = createScriptedModel([textReply("Received.")]);
    const history: Message[] = [{ role: "user", content: "Continue" }];
    await runAgentLoop(history, loopDependencies(model, { workspace, background }));

    const delivered = JSON.stringify(model.requests[0]?.messages);
    expect(delivered).toContain("<task_notification>");
    expect(delivered).toContain(`<task_id>${taskId}</task_id>`);
    expect(delivered).toContain("<status>completed</status>");
    expect(delivered).toContain("ready");
    expect(background.collectFinished()).toEqual([]);
  });

  it("keeps its code ASCII", () => {
    for (const file of ["agent/agent-loop.ts", "background/background-manager.ts"]) {
      const bytes = readFileSync(join(import.meta.dirname, "..", "..", "src", file));
      expect([...bytes].every((byte) => byte < 0x80)).toBe(true);
    }
  });

  it("allocates ids in order, bg_0001 first", () => {
    const background = new BackgroundManager({ workspace: makeWorkspace() });
    expect(background.start("true")).toBe("bg_0001");
    expect(background.start("true")).toBe("bg_0002");
    return background.stopAll();
  });
});
