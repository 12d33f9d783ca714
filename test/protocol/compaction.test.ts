import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type Line, protocolHarness, STREAM_ARGS } from "./helpers.js";

const harness = protocolHarness();
const apis: FakeMessagesApi[] = [];
afterEach(async () => {
  await harness.cleanup();
  for (const api of apis.splice(0)) await api.close();
});

const isSummary = (request: RecordedRequest) =>
  lastUserText(request).includes("write a summary of the whole conversation");

async function api(window?: number): Promise<FakeMessagesApi> {
  const started = await startFakeMessagesApi({
    ...(window === undefined ? {} : { contextWindow: window }),
    fallback: (request): ScriptStep =>
      isSummary(request)
        ? { text: "SUMMARY: the user chats about tests." }
        : { text: `echo: ${lastUserText(request).slice(0, 80)}` },
  });
  apis.push(started);
  return started;
}

const types = (lines: Line[]) =>
  lines.map((line) => (line.subtype ? `${line.type}/${line.subtype}` : line.type));

describe("stream-json /compact and /clear", () => {
  it("/compact compacts without other model work and answers with Claude Code's lines", async () => {
    const fake = await api();
    const sandbox = harness.sandbox(fake);
    const child = harness.start(sandbox);
    child.sendUser("remember FACT-11");
    const first = await child.waitForResult();
    expect(first.modelUsage[Object.keys(first.modelUsage)[0] as string]).toMatchObject({
      contextWindow: expect.any(Number),
      maxOutputTokens: expect.any(Number),
    });
    expect(first.context_tokens).toBeGreaterThan(0);
    const before = child.lines.length;
    child.sendUser("/compact keep the facts", "cmd-1");
    const result = await child.waitForResult(2);
    const lines = child.lines.slice(before);
    expect(types(lines).filter((type) => type !== "command_lifecycle")).toEqual([
      "system/status",
      "system/status",
      "system/init",
      "system/compact_boundary",
      "user",
      "user",
      "result/success",
    ]);
    const boundary = lines.find((line) => line.subtype === "compact_boundary") as Line;
    expect(boundary.compact_metadata).toMatchObject({ trigger: "manual" });
    expect(boundary.compact_metadata.pre_tokens).toBeGreaterThan(0);
    expect(boundary.session_id).toBe(first.session_id);
    expect(result).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      num_turns: 0,
      result: "",
      local_command: "compact",
      user_message_uuid: "cmd-1",
    });
    const summaryRequest = fake.mainRequests().at(-1) as RecordedRequest;
    expect(isSummary(summaryRequest)).toBe(true);
    expect(lastUserText(summaryRequest)).toContain("focus on: keep the facts");
    expect(fake.mainRequests()).toHaveLength(2);

    child.sendUser("what was the fact?");
    await child.waitForResult(3);
    const after = fake.mainRequests().at(-1) as RecordedRequest;
    const sent = JSON.stringify(after.body.messages);
    expect(sent).toContain("SUMMARY: the user chats about tests.");
    expect(sent).toContain("remember FACT-11");
    child.end();
    expect(await child.exited).toBe(0);

    // The transcript keeps the whole conversation and the boundary.
    const transcript = readFileSync(
      join(sandbox.env.RUDDER_HOME as string, "sessions", `${first.session_id}.jsonl`),
      "utf8",
    );
    expect(transcript).toContain('"type":"compact_boundary"');
    expect(transcript).toContain('"trigger":"manual"');
  }, 30_000);

  it("/clear starts a new conversation under a new session id, leaving the old transcript", async () => {
    const fake = await api();
    const sandbox = harness.sandbox(fake);
    const child = harness.start(sandbox);
    child.sendUser("before the clear");
    const first = await child.waitForResult();
    const before = child.lines.length;
    child.sendUser("/clear", "clear-1");
    const cleared = await child.waitForResult(2);
    const lines = child.lines.slice(before).filter((line) => line.type !== "command_lifecycle");
    expect(types(lines)).toEqual([
      "conversation_reset",
      "system/background_tasks_changed",
      "system/init",
      "result/success",
    ]);
    const reset = lines[0] as Line;
    expect(reset).toMatchObject({
      trigger: "clear",
      session_id: first.session_id,
      user_message_uuid: "clear-1",
    });
    const newSessionId = lines[2]?.session_id as string;
    expect(newSessionId).not.toBe(first.session_id);
    expect(cleared).toMatchObject({
      local_command: "clear",
      num_turns: 0,
      session_id: newSessionId,
    });
    child.sendUser("after the clear");
    const next = await child.waitForResult(3);
    expect(next.session_id).toBe(newSessionId);
    const sent = JSON.stringify((fake.mainRequests().at(-1) as RecordedRequest).body.messages);
    expect(sent).toContain("after the clear");
    expect(sent).not.toContain("before the clear");
    child.end();
    expect(await child.exited).toBe(0);
    const sessions = join(sandbox.env.RUDDER_HOME as string, "sessions");
    expect(existsSync(join(sessions, `${first.session_id}.jsonl`))).toBe(true);
    expect(readFileSync(join(sessions, `${newSessionId}.jsonl`), "utf8")).toContain(
      "after the clear",
    );
  }, 30_000);

  it("a /compact sent while a turn runs waits for it, and messages after it keep their order", async () => {
    const fake = await api();
    fake.push({ text: "slow answer", chunks: 4, chunkDelayMs: 100 });
    const sandbox = harness.sandbox(fake);
    const child = harness.start(sandbox);
    child.sendUser("first");
    await fake.waitForMainRequests(1);
    child.sendUser("/compact");
    child.sendUser("third");
    await child.waitForResult(3);
    const results = child.ofType("result");
    expect(results.map((line) => line.local_command ?? line.result)).toEqual([
      "slow answer",
      "compact",
      "echo: third",
    ]);
    child.end();
    expect(await child.exited).toBe(0);
  }, 30_000);

  it("compacts by itself near the window (RUDDER_CONTEXT_WINDOW), printing an auto boundary, and resumes compacted", async () => {
    const window = 3000;
    const fake = await api(window);
    const sandbox = harness.sandbox(fake);
    sandbox.env.RUDDER_CONTEXT_WINDOW = String(window);
    const child = harness.start(sandbox, [...STREAM_ARGS, "--system-prompt", "be brief"]);
    for (let turn = 0; turn < 30; turn++) {
      child.sendUser(`message ${turn}: ${"words about the task ".repeat(8)}`);
      await child.waitForResult(turn + 1);
    }
    const boundaries = child.ofType("system", "compact_boundary");
    expect(boundaries.length).toBeGreaterThanOrEqual(1);
    expect(boundaries[0]?.compact_metadata.trigger).toBe("auto");
    expect(child.ofType("result").every((line) => line.is_error === false)).toBe(true);
    expect(fake.requests.filter((request) => request.overflowed)).toEqual([]);
    const sessionId = child.ofType("result")[0]?.session_id as string;
    child.end();
    expect(await child.exited).toBe(0);

    const count = fake.requests.length;
    const resumed = harness.start(sandbox, [
      ...STREAM_ARGS,
      "--system-prompt",
      "be brief",
      "--resume",
      sessionId,
    ]);
    resumed.sendUser("carry on");
    const result = await resumed.waitForResult();
    expect(result.is_error).toBe(false);
    const sent = fake.requests
      .slice(count)
      .find((request) => !isSummary(request)) as RecordedRequest;
    expect(JSON.stringify(sent.body.messages)).toContain("This session continues");
    // The first message is carried word for word; the middle ones only in the summary.
    expect(JSON.stringify(sent.body.messages)).toContain("message 0:");
    expect(JSON.stringify(sent.body.messages)).not.toContain("message 3:");
    expect(sent.tokens).toBeLessThan(window);
    resumed.end();
    expect(await resumed.exited).toBe(0);
  }, 60_000);
});
