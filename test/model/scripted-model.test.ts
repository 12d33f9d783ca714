import { describe, expect, it } from "vitest";
import { createScriptedModel, textReply, toolUseReply } from "../../src/model/scripted-model.js";
import type { Message, ModelRequest } from "../../src/model/types.js";

function request(messages: Message[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages, tools: [], signal: new AbortController().signal, ...overrides };
}

describe("createScriptedModel", () => {
  it("answers in order, streams text and records copies of the requests", async () => {
    const model = createScriptedModel([
      toolUseReply("bash", { command: "ls" }, { id: "toolu_1", text: "listing" }),
      textReply("done"),
    ]);
    const messages: Message[] = [{ role: "user", content: "go" }];
    const deltas: string[] = [];
    const first = await model.complete(request(messages, { onTextDelta: (t) => deltas.push(t) }));
    expect(first).toMatchObject({
      ok: true,
      response: {
        stopReason: "tool_use",
        content: [
          { type: "text", text: "listing" },
          { type: "tool_use", id: "toolu_1", name: "bash", input: { command: "ls" } },
        ],
      },
    });
    expect(deltas).toEqual(["listing"]);
    messages.push({ role: "assistant", content: "changed later" });
    const second = await model.complete(request(messages));
    expect(second).toMatchObject({ ok: true, response: { stopReason: "end_turn" } });
    expect(model.requests[0]?.messages).toEqual([{ role: "user", content: "go" }]);
    expect(model.requests[1]?.messages).toHaveLength(2);
    expect(model.remaining()).toBe(0);
  });

  it("returns scripted errors, dynamic replies, and an error when exhausted", async () => {
    const model = createScriptedModel([
      { subtype: "rate_limit", message: "slow down", status: 429, resetAt: 123 },
      (incoming) => textReply(`saw ${incoming.messages.length} messages`),
    ]);
    const messages: Message[] = [{ role: "user", content: "hi" }];
    expect(await model.complete(request(messages))).toEqual({
      ok: false,
      error: { subtype: "rate_limit", message: "slow down", status: 429, resetAt: 123 },
    });
    expect(await model.complete(request(messages))).toMatchObject({
      ok: true,
      response: { content: [{ type: "text", text: "saw 1 messages" }] },
    });
    const exhausted = await model.complete(request(messages));
    expect(exhausted).toMatchObject({ ok: false, error: { subtype: "api_error" } });
    if (!exhausted.ok) expect(exhausted.error.message).toMatch(/script exhausted/);
    model.push(textReply("more"));
    expect(await model.complete(request(messages))).toMatchObject({ ok: true });
  });

  it("hangs until aborted when told to", async () => {
    const model = createScriptedModel([{ hangUntilAborted: true, text: "thinking" }]);
    const controller = new AbortController();
    const pending = model.complete(
      request([{ role: "user", content: "hi" }], {
        signal: controller.signal,
        onTextDelta: () => controller.abort(),
      }),
    );
    expect(await pending).toMatchObject({ ok: false, error: { subtype: "aborted" } });
  });
});
