import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { Session } from "../../src/agent/session.js";
import { createHookRunner } from "../../src/hooks/hook-registry.js";
import { createScriptedModel, textReply, toolUseReply } from "../../src/model/scripted-model.js";
import { emptyRules } from "../../src/permissions/types.js";
import { createDefaultTools } from "../../src/tools/default-tools.js";
import { waitFor } from "../helpers/wait-for.js";
import { cleanUpAfterEachTest, makeWorkspace } from "./kernel-helpers.js";

cleanUpAfterEachTest();

function makeSession(model: ReturnType<typeof createScriptedModel>, workspace = makeWorkspace()) {
  const session = new Session({
    model,
    tools: createDefaultTools(),
    rules: emptyRules(),
    workspace,
  });
  const events: AgentEvent[] = [];
  session.subscribe((event) => events.push(event));
  return { session, events };
}

describe("Session", () => {
  it("steers a running turn: text sent during it joins at the next model call", async () => {
    const model = createScriptedModel([
      toolUseReply("bash", { command: "sleep 0.5" }),
      textReply("answered both"),
    ]);
    const { session, events } = makeSession(model);
    const first = session.send("first");
    await waitFor(() => events.some((event) => event.type === "tool_start"));
    expect(session.running).toBe(true);
    const second = session.send("second");
    const [outcomeA, outcomeB] = await Promise.all([first, second]);
    expect(outcomeA).toBe(outcomeB);
    expect(outcomeA.result).toBe("answered both");
    expect(JSON.stringify(model.requests[1]?.messages)).toContain("second");
    expect(session.running).toBe(false);
    await session.close();
  });

  it("wakes itself for background tasks that outlive the turn", async () => {
    const model = createScriptedModel([
      toolUseReply("bash", { command: "sleep 0.3; printf late", run_in_background: true }),
      textReply("started"),
      textReply("the task said late"),
    ]);
    const { session } = makeSession(model);
    const turn = await session.send("go");
    expect(turn.result).toBe("started");
    const woken = await session.wake();
    expect(woken?.result).toBe("the task said late");
    expect(JSON.stringify(model.requests[2]?.messages)).toContain("<task_id>bg_0001</task_id>");
    expect(await session.wake()).toBeUndefined();
    await session.close();
  });

  it("aborts the running turn and is ready for the next", async () => {
    const model = createScriptedModel([
      { hangUntilAborted: true, text: "thinking" },
      textReply("fresh"),
    ]);
    const { session, events } = makeSession(model);
    const turn = session.send("hang");
    await waitFor(() => events.some((event) => event.type === "text_delta"));
    session.abort();
    expect(await turn).toMatchObject({
      isError: true,
      subtype: "aborted",
      terminalReason: "aborted_streaming",
    });
    expect(events).toContainEqual({ type: "interrupted", marker: "[Request interrupted by user]" });
    expect((await session.send("again")).result).toBe("fresh");
    // The cut-off reply stays as it was shown, and the model is told the request was interrupted,
    // so "again" is not read as more of "hang".
    expect(model.requests[1]?.messages).toEqual([
      { role: "user", content: "hang" },
      { role: "assistant", content: [{ type: "text", text: "thinking" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "[Request interrupted by user]" },
          { type: "text", text: "again" },
        ],
      },
    ]);
    await session.close();
  });

  it("keeps no whitespace-only reply from an interrupt (the API refuses such text blocks)", async () => {
    const model = createScriptedModel([
      { hangUntilAborted: true, text: "\n\n" },
      textReply("fresh"),
    ]);
    const { session, events } = makeSession(model);
    const turn = session.send("hang");
    await waitFor(() => events.some((event) => event.type === "text_delta"));
    session.abort();
    expect(await turn).toMatchObject({ terminalReason: "aborted_streaming" });
    expect((await session.send("again")).result).toBe("fresh");
    expect(model.requests[1]?.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "hang" },
          { type: "text", text: "[Request interrupted by user]" },
          { type: "text", text: "again" },
        ],
      },
    ]);
    await session.close();
  });

  it("lets a UserPromptSubmit hook block a prompt or add context", async () => {
    const workspace = makeWorkspace();
    const hooks = createHookRunner({ cwd: workspace });
    hooks.on("UserPromptSubmit", (input) =>
      input.prompt?.includes("secret")
        ? { blocked: true, reason: "no secrets" }
        : { additionalContext: ["today is a holiday"] },
    );
    const model = createScriptedModel([textReply("ok")]);
    const session = new Session({
      model,
      tools: createDefaultTools(),
      rules: emptyRules(),
      workspace,
      hooks,
    });
    const blocked = await session.send("tell me the secret");
    expect(blocked).toMatchObject({ isError: true, subtype: "prompt_blocked" });
    expect(blocked.result).toContain("no secrets");
    expect(model.requests).toHaveLength(0);
    await session.send("hello");
    expect(JSON.stringify(model.requests[0]?.messages)).toContain("today is a holiday");
    await session.close();
  });
});
