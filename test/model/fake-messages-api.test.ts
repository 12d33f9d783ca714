import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { outputMatching, startProcess } from "../helpers/owned-process.js";

const servers: FakeMessagesApi[] = [];

async function start(options?: Parameters<typeof startFakeMessagesApi>[0]) {
  const api = await startFakeMessagesApi(options);
  servers.push(api);
  const client = new Anthropic({ apiKey: "dummy", baseURL: api.url, maxRetries: 0 });
  return { api, client };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((api) => api.close()));
});

describe("fake Messages API", () => {
  it("answers a non-streaming request with a scripted text and records it", async () => {
    const { api, client } = await start({ script: [{ text: "hello there" }] });
    const message = await client.messages.create({
      model: "claude-anything-9",
      max_tokens: 100,
      system: [{ type: "text", text: "be brief" }],
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.content).toEqual([{ type: "text", text: "hello there" }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.id).toBe("msg_fake_1");
    expect(message.model).toBe("claude-anything-9");
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]?.path).toBe("/v1/messages");
    expect(api.requests[0]?.body.system).toEqual([{ type: "text", text: "be brief" }]);
    const headers = api.requests[0]?.headers ?? {};
    expect(headers["x-api-key"] ?? headers.authorization).toMatch(/dummy/);
    expect(api.requests[0]?.main).toBe(true);
    expect(lastUserText(api.requests[0]!)).toBe("hi");
  });

  it("streams text deltas and tool input as SSE the SDK parses", async () => {
    const { api, client } = await start({
      script: [
        { text: "one two three four five", chunks: 4 },
        { toolUse: { name: "bash", input: { command: "ls -la" } }, text: "running" },
      ],
    });
    const deltas: string[] = [];
    const stream = client.messages.stream({
      model: "m",
      max_tokens: 100,
      messages: [{ role: "user", content: "hi" }],
    });
    stream.on("text", (text) => deltas.push(text));
    const first = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("one two three four five");
    expect(first.content).toEqual([{ type: "text", text: "one two three four five" }]);

    const second = await client.messages
      .stream({
        model: "m",
        max_tokens: 100,
        tools: [{ name: "bash", description: "run", input_schema: { type: "object" } }],
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: first.content },
          { role: "user", content: "again" },
        ],
      })
      .finalMessage();
    expect(second.stop_reason).toBe("tool_use");
    expect(second.content[0]).toEqual({ type: "text", text: "running" });
    expect(second.content[1]).toMatchObject({
      type: "tool_use",
      id: "toolu_fake_1",
      name: "bash",
      input: { command: "ls -la" },
    });
    expect(api.mainRequests()).toHaveLength(2);
  });

  it("accepts a role system entry inside messages and the beta query", async () => {
    const { api } = await start({ script: [{ text: "ok" }] });
    const response = await fetch(`${api.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        max_tokens: 10,
        thinking: { type: "enabled", budget_tokens: 5 },
        metadata: { user_id: "x" },
        messages: [
          { role: "user", content: "hi" },
          { role: "system", content: "a system note" },
        ],
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { content: unknown };
    expect(body.content).toEqual([{ type: "text", text: "ok" }]);
    expect(api.requests[0]?.url).toBe("/v1/messages?beta=true");
  });

  it("returns a 429 with retry-after and rate-limit reset headers", async () => {
    const { client } = await start({
      script: [{ error: { status: 429, retryAfterSeconds: 7, message: "slow down" } }],
    });
    const error = await client.messages
      .create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const rateLimit = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(rateLimit.status).toBe(429);
    expect(rateLimit.headers.get("retry-after")).toBe("7");
    const reset = Date.parse(rateLimit.headers.get("anthropic-ratelimit-requests-reset") ?? "");
    expect(reset).toBeGreaterThan(Date.now());
    expect(rateLimit.error).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "slow down" },
    });
  });

  it("returns a streaming 529 as an overloaded error", async () => {
    const { client } = await start({ script: [{ error: { status: 529 } }] });
    const error = await client.messages
      .stream({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
      .finalMessage()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
  });

  it("fails mid-stream with an SSE error event", async () => {
    const { client } = await start({
      script: [{ streamError: { type: "overloaded_error" }, text: "so far" }, { streamError: {} }],
    });
    const deltas: string[] = [];
    const stream = client.messages.stream({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    stream.on("text", (text) => deltas.push(text));
    const error = await stream.finalMessage().catch((caught: unknown) => caught);
    expect(deltas.join("")).toBe("so far");
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe("overloaded_error");
    const plain = await client.messages
      .create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
      .catch((caught: unknown) => caught);
    expect((plain as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
  });

  it("answers side requests without consuming the script", async () => {
    const { api } = await start({ script: [{ text: "main answer" }] });
    const post = (body: unknown) =>
      fetch(`${api.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "claude-cli/2.1.328" },
        body: JSON.stringify(body),
      }).then((response) => response.json() as Promise<{ content: Array<{ text: string }> }>);
    const probe = await post({
      model: "m",
      max_tokens: 1,
      messages: [{ role: "user", content: "q" }],
    });
    expect(probe.content[0]?.text).toBe("(fake: side reply)");
    const title = await post({
      model: "m",
      max_tokens: 50,
      messages: [{ role: "user", content: "t" }],
    });
    expect(title.content[0]?.text).toBe("(fake: side reply)");
    const main = await post({
      model: "m",
      max_tokens: 50,
      tools: [{ name: "Bash", input_schema: { type: "object" } }],
      messages: [{ role: "user", content: "do it" }],
    });
    expect(main.content[0]?.text).toBe("main answer");
    expect(api.requests.map((entry) => entry.main)).toEqual([false, false, true]);
    expect(api.pending()).toBe(0);
  });

  it("serves dynamic replies, the fallback, count_tokens and 404s", async () => {
    const { api, client } = await start({
      script: [{ reply: (request) => ({ text: `results: ${lastToolResults(request).length}` }) }],
      fallback: (request) => ({ text: `you said ${lastUserText(request)}` }),
    });
    const ask = (content: string) =>
      client.messages.create({ model: "m", max_tokens: 10, messages: [{ role: "user", content }] });
    expect((await ask("a")).content).toEqual([{ type: "text", text: "results: 0" }]);
    expect((await ask("b")).content).toEqual([{ type: "text", text: "you said b" }]);
    const count = await client.messages.countTokens({
      model: "m",
      messages: [{ role: "user", content: "count me" }],
    });
    expect(count.input_tokens).toBeGreaterThan(0);
    const missing = await fetch(`${api.url}/v1/models`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      type: "error",
      error: { type: "not_found_error" },
    });
  });

  it("says the script is exhausted when empty, and waits for requests", async () => {
    const { api, client } = await start();
    const waiting = api.waitForRequests(1);
    const message = await client.messages.create({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.content).toEqual([{ type: "text", text: "(fake: script exhausted)" }]);
    expect(await waiting).toHaveLength(1);
    await expect(api.waitForRequests(2, 50)).rejects.toThrow(/wanted 2 requests/);
  });

  it("holds a hanging stream until the client aborts, and closes with it open", async () => {
    const { api, client } = await start({
      script: [{ hangUntilAborted: true, text: "partial text" }],
    });
    const controller = new AbortController();
    const deltas: string[] = [];
    const stream = client.messages.stream(
      { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
      { signal: controller.signal },
    );
    const firstDelta = new Promise<void>((resolve) =>
      stream.on("text", (text) => {
        deltas.push(text);
        if (deltas.join("") === "partial text") resolve();
      }),
    );
    const outcome = stream.finalMessage().catch((error: unknown) => error);
    await firstDelta;
    await api.close();
    controller.abort();
    expect(await outcome).toBeInstanceOf(Error);
  });

  it("runs as a program that prints its URL and echoes", async () => {
    const program = startProcess(process.execPath, [
      "--import",
      "tsx",
      "test/helpers/fake-messages-api.ts",
      "--port",
      "0",
    ]);
    try {
      const [, url] = await outputMatching(program, /^(.*)\n/);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const client = new Anthropic({ apiKey: "dummy", baseURL: url, maxRetries: 0 });
      const message = await client.messages.create({
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "ping" }],
      });
      expect(message.content).toEqual([{ type: "text", text: "echo: ping" }]);
    } finally {
      program.kill("SIGTERM");
      await program.exited;
    }
  });
});
