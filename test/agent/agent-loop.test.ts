import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_STOP_CONTINUATIONS, runAgentLoop } from "../../src/agent/agent-loop.js";
import { Inbox } from "../../src/agent/inbox.js";
import { createHookRunner } from "../../src/hooks/hook-registry.js";
import {
  createScriptedModel,
  type ScriptedStep,
  textReply,
  toolUseReply,
} from "../../src/model/scripted-model.js";
import type { Message, ToolResultBlock } from "../../src/model/types.js";
import { waitFor } from "../helpers/wait-for.js";
import { cleanUpAfterEachTest, loopDependencies, makeWorkspace } from "./kernel-helpers.js";

cleanUpAfterEachTest();

function toolResults(message: Message | undefined): ToolResultBlock[] {
  if (message === undefined || typeof message.content === "string") return [];
  return message.content.filter((block): block is ToolResultBlock => block.type === "tool_result");
}

describe("agent loop", () => {
  it("continues while the reply holds tool_use blocks, whatever stop_reason says", async () => {
    const model = createScriptedModel([
      { ...toolUseReply("bash", { command: "printf hi" }), stopReason: "end_turn" },
      textReply("done"),
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    const outcome = await runAgentLoop(history, loopDependencies(model));
    expect(outcome).toMatchObject({
      isError: false,
      subtype: "success",
      numTurns: 2,
      result: "done",
    });
    expect(toolResults(history[2])[0]?.content).toBe("hi");
  });

  it("ignores unknown input fields such as bash's description", async () => {
    const model = createScriptedModel([
      toolUseReply("bash", { command: "printf ok", description: "say ok" }),
      textReply("done"),
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    await runAgentLoop(history, loopDependencies(model));
    expect(toolResults(history[2])[0]).toMatchObject({ content: "ok" });
  });

  it("turns a failing or unknown tool into an error result the model reads", async () => {
    const model = createScriptedModel([
      toolUseReply("read_file", { path: "missing.txt" }),
      toolUseReply("teleport", { to: "mars" }),
      toolUseReply("write_file", { path: 42 }),
      textReply("ok"),
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    const outcome = await runAgentLoop(history, loopDependencies(model));
    expect(outcome.isError).toBe(false);
    const [missing, unknown, invalid] = [2, 4, 6].map((index) => toolResults(history[index])[0]);
    expect(missing?.is_error).toBe(true);
    expect(unknown?.content).toContain('unknown tool "teleport"');
    expect(invalid?.content).toContain("invalid input for write_file: path: Invalid type");
    expect(invalid?.content).toContain("content: required.");
  });

  it("reports a background exit 7 as failed with status 7", async () => {
    const model = createScriptedModel([
      toolUseReply("bash", { command: "echo bad; exit 7", run_in_background: true }),
      textReply("started"),
    ]);
    const dependencies = loopDependencies(model);
    await runAgentLoop([{ role: "user", content: "go" }], dependencies);
    const task = dependencies.background.tasks.get("bg_0001");
    await waitFor(() => task?.status !== "running");
    expect(task?.status).toBe("failed");

    model.push(textReply("seen"));
    const history: Message[] = [{ role: "user", content: "next" }];
    await runAgentLoop(history, dependencies);
    const delivered = JSON.stringify(model.requests.at(-1)?.messages);
    expect(delivered).toContain("<status>failed</status>");
    expect(delivered).toContain("status 7");
    expect(delivered).toContain("not user input");
  });

  it("delivers a notification exactly once to concurrent collectors", async () => {
    const dependencies = loopDependencies(createScriptedModel());
    const { background } = dependencies;
    background.start("printf one");
    await waitFor(() => background.tasks.get("bg_0001")?.status === "completed");
    const [first, second] = await Promise.all([
      Promise.resolve().then(() => background.collectFinished()),
      Promise.resolve().then(() => background.collectFinished()),
    ]);
    expect([...(first ?? []), ...(second ?? [])].map((task) => task.id)).toEqual(["bg_0001"]);
  });

  it("appends notifications to the last user message, or adds one after the assistant", async () => {
    const dependencies = loopDependencies(createScriptedModel([textReply("a"), textReply("b")]));
    const { background } = dependencies;
    background.start("printf first");
    await waitFor(() => background.runningCount() === 0);
    const history: Message[] = [{ role: "user", content: "hello" }];
    await runAgentLoop(history, dependencies);
    expect(history).toHaveLength(2);
    expect(JSON.stringify(history[0])).toContain("<task_notification>");

    background.start("printf second");
    await waitFor(() => background.runningCount() === 0);
    await runAgentLoop(history, dependencies);
    expect(history[2]?.role).toBe("user");
    expect(JSON.stringify(history[2])).toContain("bg_0002");
  });

  it("never sends an empty user message: nothing waiting means no model call", async () => {
    const model = createScriptedModel([textReply("x")]);
    const history: Message[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "text", text: "hello" }] },
    ];
    const outcome = await runAgentLoop(history, loopDependencies(model));
    expect(model.requests).toHaveLength(0);
    expect(outcome.numTurns).toBe(0);
  });

  it("delivers steering text from the inbox at the next model call of the same turn", async () => {
    const inbox = new Inbox();
    const steps: ScriptedStep[] = [
      () => {
        inbox.push("also say bye");
        return toolUseReply("bash", { command: "printf x" });
      },
      textReply("hi and bye"),
    ];
    const model = createScriptedModel(steps);
    const outcome = await runAgentLoop(
      [{ role: "user", content: "say hi" }],
      loopDependencies(model, { inbox }),
    );
    expect(outcome.numTurns).toBe(2);
    expect(JSON.stringify(model.requests[1]?.messages)).toContain("also say bye");
  });

  it("ends a failed model call as an error outcome naming the failure", async () => {
    const model = createScriptedModel([
      {
        subtype: "rate_limit",
        message: "API Error: Request rejected (429)",
        status: 429,
        resetAt: 1,
      },
    ]);
    const outcome = await runAgentLoop([{ role: "user", content: "hi" }], loopDependencies(model));
    expect(outcome).toMatchObject({
      isError: true,
      subtype: "rate_limit",
      apiErrorStatus: 429,
      resetAt: 1,
      terminalReason: "model_error",
    });
  });

  it("aborts a running tool and still answers every tool_use", async () => {
    const controller = new AbortController();
    const workspace = makeWorkspace();
    const model = createScriptedModel([
      {
        content: [
          { type: "tool_use", id: "t1", name: "bash", input: { command: "sleep 30" } },
          { type: "tool_use", id: "t2", name: "bash", input: { command: "touch second" } },
        ],
      },
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    const dependencies = loopDependencies(model, { workspace, signal: controller.signal });
    const running = runAgentLoop(history, dependencies);
    await waitFor(() => dependencies.events.some((event) => event.type === "tool_start"));
    controller.abort();
    const outcome = await running;
    expect(outcome).toMatchObject({ isError: true, subtype: "aborted" });
    expect(toolResults(history[2]).map((result) => result.tool_use_id)).toEqual(["t1", "t2"]);
    expect(existsSync(join(workspace, "second"))).toBe(false);
  });

  it("asks through confirm for destructive commands, and denies with nobody to ask", async () => {
    const workspace = makeWorkspace();
    writeFileSync(join(workspace, "a.txt"), "x");
    const asked: string[] = [];
    const model = createScriptedModel([
      toolUseReply("bash", { command: "rm a.txt" }),
      textReply("done"),
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    await runAgentLoop(
      history,
      loopDependencies(model, {
        workspace,
        confirm: async (request) => {
          asked.push(String(request.input.command));
          return true;
        },
      }),
    );
    expect(asked).toEqual(["rm a.txt"]);
    expect(existsSync(join(workspace, "a.txt"))).toBe(false);
  });

  it("lets a Stop hook push the loop on, at most 8 times in a row", async () => {
    const workspace = makeWorkspace();
    const hooks = createHookRunner({ cwd: workspace });
    hooks.on("Stop", () => ({ blocked: true, reason: "keep going" }));
    const model = createScriptedModel(
      Array.from({ length: 20 }, (_, index) => textReply(`reply ${index}`)),
    );
    const outcome = await runAgentLoop(
      [{ role: "user", content: "go" }],
      loopDependencies(model, { workspace, hooks }),
    );
    expect(outcome.numTurns).toBe(MAX_STOP_CONTINUATIONS + 1);
    expect(JSON.stringify(model.requests[1]?.messages)).toContain("keep going");
  });

  it("blocks a tool when a command hook exits 2, with its stderr as the reason", async () => {
    const workspace = makeWorkspace();
    const hooks = createHookRunner({
      cwd: workspace,
      commandHooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [{ type: "command", command: "echo 'no shell today' >&2; exit 2" }],
          },
        ],
      },
    });
    const model = createScriptedModel([
      toolUseReply("bash", { command: "touch made" }),
      textReply("ok"),
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    await runAgentLoop(history, loopDependencies(model, { workspace, hooks }));
    expect(toolResults(history[2])[0]?.content).toContain("no shell today");
    expect(existsSync(join(workspace, "made"))).toBe(false);
  });
});

describe("hooks that stop the turn", () => {
  it("ends the turn when a PostToolUse hook answers continue: false", async () => {
    const workspace = makeWorkspace();
    const hooks = createHookRunner({
      cwd: workspace,
      commandHooks: {
        PostToolUse: [
          {
            matcher: "Bash",
            hooks: [
              {
                type: "command",
                command: `echo '{"continue": false, "stopReason": "tests are red"}'`,
              },
            ],
          },
        ],
      },
    });
    const model = createScriptedModel([
      {
        content: [
          { type: "tool_use", id: "a", name: "bash", input: { command: "printf one" } },
          { type: "tool_use", id: "b", name: "bash", input: { command: "touch two" } },
        ],
      },
      textReply("never asked"),
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    const outcome = await runAgentLoop(history, loopDependencies(model, { workspace, hooks }));
    expect(outcome).toMatchObject({ terminalReason: "hook_stopped", numTurns: 1 });
    expect(outcome.result).toContain("tests are red");
    expect(toolResults(history[2]).map((result) => result.tool_use_id)).toEqual(["a", "b"]);
    expect(existsSync(join(workspace, "two"))).toBe(false);
    expect(model.requests).toHaveLength(1);
  });
});

describe("confirm answers with more than yes or no", () => {
  it("runs a confirmed replacement input, but never one the deny list forbids", async () => {
    const workspace = makeWorkspace();
    const replacements = [{ command: "touch safe.txt" }, { command: "sudo touch root.txt" }];
    const model = createScriptedModel([
      toolUseReply("bash", { command: "rm -f a.txt" }),
      toolUseReply("bash", { command: "rm -f b.txt" }),
      textReply("done"),
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    await runAgentLoop(
      history,
      loopDependencies(model, {
        workspace,
        confirm: async () => ({ allowed: true, updatedInput: replacements.shift() ?? {} }),
      }),
    );
    expect(existsSync(join(workspace, "safe.txt"))).toBe(true);
    expect(toolResults(history[4])[0]?.content).toContain("Permission denied");
  });

  it("gives the model the denial's message", async () => {
    const model = createScriptedModel([
      toolUseReply("bash", { command: "rm -f a.txt" }),
      textReply("ok"),
    ]);
    const history: Message[] = [{ role: "user", content: "go" }];
    await runAgentLoop(
      history,
      loopDependencies(model, {
        confirm: async () => ({ allowed: false, message: "use git rm instead" }),
      }),
    );
    expect(toolResults(history[2])[0]?.content).toBe("Permission denied: use git rm instead");
  });
});
