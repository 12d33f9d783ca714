import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AnthropicModelOptions,
  createAnthropicModel,
} from "../../src/model/anthropic-model.js";
import type { ModelRequest, ModelRetry } from "../../src/model/types.js";
import {
  type FakeMessagesApi,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";

const servers: FakeMessagesApi[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((api) => api.close()));
});

async function setup(script: ScriptStep[], options: Partial<AnthropicModelOptions> = {}) {
  const api = await startFakeMessagesApi({ script });
  servers.push(api);
  const model = createAnthropicModel({
    model: "claude-sonnet-5-5",
    apiKey: "test-key",
    baseURL: api.url,
    maxRetries: 2,
    retryBaseDelayMs: 1,
    ...options,
  });
  return { api, model };
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    system: "be helpful",
    messages: [{ role: "user", content: "hello" }],
    tools: [{ name: "bash", description: "run", input_schema: { type: "object" } }],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** A loopback port with nothing listening. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address !== null ? address.port : 0;
}

describe("createAnthropicModel", () => {
  it("streams text deltas in order and assembles text and tool use", async () => {
    const { api, model } = await setup([
      { text: "Looking at the files now", chunks: 5 },
      { toolUse: { name: "bash", input: { command: "ls", run_in_background: true } }, text: "ok" },
    ]);
    const deltas: string[] = [];
    const first = await model.complete(request({ onTextDelta: (text) => deltas.push(text) }));
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join("")).toBe("Looking at the files now");
    expect(first).toMatchObject({
      ok: true,
      response: {
        id: "msg_fake_1",
        content: [{ type: "text", text: "Looking at the files now" }],
        stopReason: "end_turn",
      },
    });
    if (!first.ok) throw new Error("unreachable");
    expect(first.response.usage.input_tokens).toBeGreaterThan(0);
    expect(first.response.usage.output_tokens).toBeGreaterThan(0);

    const inputs: string[] = [];
    const second = await model.complete(
      request({ onToolInput: (name, json) => inputs.push(`${name} ${json}`) }),
    );
    // The input as it streams in: empty as the block starts, then each piece added.
    expect(inputs[0]).toBe("bash ");
    expect(inputs.length).toBeGreaterThan(1);
    expect(JSON.parse(inputs.at(-1)!.slice("bash ".length))).toEqual({
      command: "ls",
      run_in_background: true,
    });
    expect(second).toMatchObject({
      ok: true,
      response: {
        content: [
          { type: "text", text: "ok" },
          {
            type: "tool_use",
            id: "toolu_fake_1",
            name: "bash",
            input: { command: "ls", run_in_background: true },
          },
        ],
        stopReason: "tool_use",
      },
    });
    const body = api.requests[0]?.body;
    expect(body.model).toBe("claude-sonnet-5-5");
    expect(body.stream).toBe(true);
    expect(body.system[0]).toMatchObject({ type: "text", text: "be helpful" });
    expect(body.tools[0].name).toBe("bash");
    expect(body.messages).toEqual([{ role: "user", content: "hello" }]);
    expect(model.name).toBe("claude-sonnet-5-5");
  });

  it("retries a 429 as soon as retry-after allows and reports each retry", async () => {
    const { api, model } = await setup([
      { error: { status: 429, retryAfterSeconds: 0 } },
      { error: { status: 529, retryAfterSeconds: 0 } },
      { text: "finally" },
    ]);
    const retries: ModelRetry[] = [];
    const outcome = await model.complete(request({ onRetry: (retry) => retries.push(retry) }));
    expect(outcome).toMatchObject({ ok: true, response: { content: [{ text: "finally" }] } });
    expect(api.requests).toHaveLength(3);
    expect(retries.map((retry) => [retry.attempt, retry.status, retry.delayMs])).toEqual([
      [1, 429, 0],
      [2, 529, 0],
    ]);
    expect(retries[0]?.maxRetries).toBe(2);
  });

  it("turns an exhausted 429 into a rate_limit error with its reset time", async () => {
    const { api, model } = await setup([
      { error: { status: 429, retryAfterSeconds: 0 } },
      { error: { status: 429, retryAfterSeconds: 0 } },
      { error: { status: 429, retryAfterSeconds: 0, message: "Number of requests exceeded" } },
    ]);
    const before = Date.now();
    const outcome = await model.complete(request());
    expect(api.requests).toHaveLength(3);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) throw new Error("unreachable");
    expect(outcome.error.subtype).toBe("rate_limit");
    expect(outcome.error.status).toBe(429);
    expect(outcome.error.message).toBe(
      "API Error: Request rejected (429) rate_limit_error: Number of requests exceeded",
    );
    expect(outcome.error.resetAt).toBeGreaterThanOrEqual(before - 1000);
  });

  it("does not wait when the server asks for longer than the longest wait", async () => {
    const { api, model } = await setup([{ error: { status: 429, retryAfterSeconds: 3600 } }]);
    const retries: ModelRetry[] = [];
    const outcome = await model.complete(request({ onRetry: (retry) => retries.push(retry) }));
    expect(api.requests).toHaveLength(1);
    expect(retries).toEqual([]);
    if (outcome.ok) throw new Error("expected a failure");
    expect(outcome.error.subtype).toBe("rate_limit");
    expect(outcome.error.resetAt).toBeGreaterThan(Date.now() + 3500 * 1000);
  });

  it("names 529, 5xx, 401 and 400 failures", async () => {
    const cases: Array<[ScriptStep, string, number]> = [
      [{ error: { status: 529 } }, "overloaded", 3],
      [{ error: { status: 500 } }, "api_error", 3],
      [{ error: { status: 401 } }, "authentication_failed", 1],
      [{ error: { status: 403 } }, "authentication_failed", 1],
      [{ error: { status: 400, message: "messages: bad" } }, "invalid_request", 1],
    ];
    for (const [step, subtype, attempts] of cases) {
      const { api, model } = await setup([step, step, step]);
      const outcome = await model.complete(request());
      if (outcome.ok) throw new Error("expected a failure");
      expect(outcome.error.subtype).toBe(subtype);
      expect(outcome.error.message).toMatch(/^API Error: Request rejected \(\d{3}\) \w+: .+/);
      expect(api.requests).toHaveLength(attempts);
    }
  });

  it("reports a connection failure as network_error after retrying", async () => {
    const port = await closedPort();
    const model = createAnthropicModel({
      model: "claude-sonnet-5-5",
      apiKey: "test-key",
      baseURL: `http://127.0.0.1:${port}`,
      maxRetries: 1,
      retryBaseDelayMs: 1,
    });
    const retries: ModelRetry[] = [];
    const outcome = await model.complete(request({ onRetry: (retry) => retries.push(retry) }));
    if (outcome.ok) throw new Error("expected a failure");
    expect(outcome.error.subtype).toBe("network_error");
    expect(outcome.error.status).toBeUndefined();
    expect(outcome.error.message).toMatch(/^API Error: Connection error \(connect ECONNREFUSED/);
    expect(retries).toHaveLength(1);
  });

  it("retries an error that arrives mid-stream as overloaded", async () => {
    const { api, model } = await setup([
      { streamError: { type: "overloaded_error", message: "Overloaded" }, text: "half" },
      { text: "whole" },
    ]);
    const retries: ModelRetry[] = [];
    const outcome = await model.complete(request({ onRetry: (retry) => retries.push(retry) }));
    expect(outcome).toMatchObject({ ok: true, response: { content: [{ text: "whole" }] } });
    expect(api.requests).toHaveLength(2);
    expect(retries[0]?.status).toBe(529);
    expect(retries[0]?.message).toBe(
      "API Error: Request rejected (529) overloaded_error: Overloaded",
    );
  });

  it("drops a stream that goes quiet and tries again", async () => {
    const { api, model } = await setup(
      [{ hangUntilAborted: true, text: "stuck" }, { text: "fine" }],
      {
        streamIdleTimeoutMs: 200,
      },
    );
    const retries: ModelRetry[] = [];
    const outcome = await model.complete(request({ onRetry: (retry) => retries.push(retry) }));
    expect(outcome).toMatchObject({ ok: true, response: { content: [{ text: "fine" }] } });
    expect(api.requests).toHaveLength(2);
    expect(retries[0]?.message).toMatch(/no data from the API/);
  });

  it("tries a stream that stalls after its first delta once more, then fails in plain words", async () => {
    const { api, model } = await setup(
      [
        { hangUntilAborted: true, text: "stuck" },
        { hangUntilAborted: true, text: "stuck again" },
        { text: "never asked for" },
      ],
      { streamIdleTimeoutMs: 200, maxRetries: 4 },
    );
    const retries: ModelRetry[] = [];
    const outcome = await model.complete(request({ onRetry: (retry) => retries.push(retry) }));
    expect(outcome).toEqual({
      ok: false,
      error: {
        subtype: "network_error",
        message:
          "API Error: the Messages API sent nothing for 0.2 s on each of 2 tries; rudder stopped " +
          "waiting for the model (RUDDER_STREAM_IDLE_TIMEOUT_MS sets how long it waits)",
      },
    });
    expect(api.mainRequests()).toHaveLength(2);
    expect(retries).toEqual([
      expect.objectContaining({
        attempt: 1,
        delayMs: 0,
        message: expect.stringMatching(/no data/),
      }),
    ]);
  });

  it("bounds a request that is never answered at all the same way", async () => {
    const { api, model } = await setup([{ neverAnswer: true }, { neverAnswer: true }], {
      streamIdleTimeoutMs: 200,
    });
    const started = Date.now();
    const outcome = await model.complete(request());
    expect(outcome.ok).toBe(false);
    if (outcome.ok) throw new Error("unreachable");
    expect(outcome.error.message).toMatch(/sent nothing for 0.2 s on each of 2 tries; rudder/);
    expect(api.mainRequests()).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("stops waiting for a retry when aborted", async () => {
    const { api, model } = await setup([{ error: { status: 529, retryAfterSeconds: 30 } }]);
    const controller = new AbortController();
    let retried: () => void = () => {};
    const retryAnnounced = new Promise<void>((resolve) => {
      retried = resolve;
    });
    const pending = model.complete(
      request({ signal: controller.signal, onRetry: () => retried() }),
    );
    await retryAnnounced;
    controller.abort();
    const outcome = await pending;
    expect(outcome).toEqual({
      ok: false,
      error: { subtype: "aborted", message: "Request aborted" },
    });
    expect(api.requests).toHaveLength(1);
  });

  it("stops a stream in flight when aborted", async () => {
    const { model } = await setup([{ hangUntilAborted: true, text: "partial" }]);
    const controller = new AbortController();
    const deltas: string[] = [];
    const pending = model.complete(
      request({
        signal: controller.signal,
        onTextDelta: (text) => {
          deltas.push(text);
          if (deltas.join("") === "partial") controller.abort();
        },
      }),
    );
    const outcome = await pending;
    expect(outcome.ok).toBe(false);
    if (outcome.ok) throw new Error("unreachable");
    expect(outcome.error.subtype).toBe("aborted");
  });

  it("marks the last message block as a cache breakpoint without touching the request", async () => {
    const { api, model } = await setup([{ text: "ok" }]);
    const messages: ModelRequest["messages"] = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "done" }] },
    ];
    const copy = structuredClone(messages);
    await model.complete(request({ messages }));
    expect(messages).toEqual(copy);
    const sent = api.requests[0]?.body.messages;
    expect(sent[2].content[0]).toMatchObject({ cache_control: { type: "ephemeral" } });
  });
});
