import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { contextBudget } from "../../src/agent/context-budget.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { Session } from "../../src/agent/session.js";
import { createAnthropicModel } from "../../src/model/anthropic-model.js";
import { emptyRules } from "../../src/permissions/types.js";
import { createDefaultTools } from "../../src/tools/default-tools.js";
import {
  type FakeMessagesApi,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import { cleanUpAfterEachTest, makeWorkspace } from "./kernel-helpers.js";

cleanUpAfterEachTest();

const FACT = "the launch code is FACT-7731";
const apis: FakeMessagesApi[] = [];

afterEach(async () => {
  for (const api of apis.splice(0)) await api.close();
});

function isSummaryRequest(request: RecordedRequest): boolean {
  return lastUserText(request).includes("write a summary of the whole conversation");
}

/** A model that answers each prompt briefly and each compaction request with a summary. */
function reply(request: RecordedRequest): ScriptStep {
  if (isSummaryRequest(request)) return { text: "1. Goal: keep chatting. 2-7: none." };
  return { text: `noted: ${lastUserText(request).slice(0, 120)}` };
}

async function start(options: { window?: number; script?: ScriptStep[] } = {}) {
  const api = await startFakeMessagesApi({
    fallback: reply,
    ...(options.window === undefined ? {} : { contextWindow: options.window }),
    ...(options.script === undefined ? {} : { script: options.script }),
  });
  apis.push(api);
  const model = createAnthropicModel({
    model: "claude-haiku-5-5",
    apiKey: "dummy",
    baseURL: api.url,
    maxRetries: 0,
  });
  return { api, model };
}

function sessionOf(model: ReturnType<typeof createAnthropicModel>, window: number) {
  const session = new Session({
    model,
    tools: [],
    rules: emptyRules(),
    workspace: makeWorkspace(),
    systemPrompt: "You are a test agent.",
    contextBudget: contextBudget(window, 32_000),
  });
  const events: AgentEvent[] = [];
  session.subscribe((event) => events.push(event));
  return { session, events };
}

const filler = (turn: number) =>
  `turn ${turn}: here is some more context about the task, ${"lorem ipsum ".repeat(12)}`;

describe("auto-compaction against a window-enforcing Messages API", () => {
  it("carries a 200-turn conversation through a small window without a 400, compacting several times", async () => {
    const window = 4000;
    const { api, model } = await start({ window });
    const { session, events } = sessionOf(model, window);
    const first = await session.send(`Remember this: ${FACT}. Then answer each message briefly.`);
    expect(first.isError).toBe(false);
    for (let turn = 1; turn < 200; turn++) {
      const outcome = await session.send(filler(turn));
      expect(outcome.isError, outcome.result).toBe(false);
    }
    const compactions = events.filter(
      (event) => event.type === "compaction_end" && event.error === undefined,
    );
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    expect(api.requests.filter((request) => request.overflowed)).toEqual([]);
    expect(Math.max(...api.requests.map((request) => request.tokens))).toBeLessThanOrEqual(window);

    // After every compaction, every request still carries the first message's fact.
    const firstCompaction = api.requests.findIndex(isSummaryRequest);
    const after = api.requests.slice(firstCompaction + 1).filter((r) => !isSummaryRequest(r));
    expect(after.length).toBeGreaterThan(100);
    for (const request of after) expect(JSON.stringify(request.body.messages)).toContain(FACT);
    for (const event of compactions) {
      if (event.type !== "compaction_end") continue;
      expect(event.trigger).toBe("auto");
      expect(event.postTokens).toBeLessThan(event.preTokens);
    }
    await session.close();
  }, 60_000);

  it("never cuts between a tool_use and its tool_result", async () => {
    const window = 3000;
    const { api, model } = await start({ window });
    const workspace = makeWorkspace();
    writeFileSync(join(workspace, "notes.txt"), `${"some notes ".repeat(40)}\n`);
    let calls = 0;
    api.push(
      ...Array.from({ length: 80 }, () => ({
        reply: (request: RecordedRequest): ScriptStep => {
          if (isSummaryRequest(request)) return { text: "summary: read notes.txt many times" };
          calls += 1;
          return calls <= 30
            ? { toolUse: { name: "read_file", input: { path: "notes.txt" } } }
            : { text: "all done" };
        },
      })),
    );
    const session = new Session({
      model,
      tools: createDefaultTools(),
      rules: emptyRules(),
      workspace,
      contextBudget: contextBudget(window, 32_000),
    });
    const outcome = await session.send("read notes.txt thirty times");
    expect(outcome.isError, outcome.result).toBe(false);
    expect(outcome.result).toBe("all done");
    expect(api.requests.some(isSummaryRequest)).toBe(true);
    for (const request of api.requests) {
      const messages = request.body.messages as Array<{ role: string; content: unknown }>;
      const uses = new Set<string>();
      for (const message of messages) {
        if (!Array.isArray(message.content)) continue;
        for (const block of message.content as Array<Record<string, unknown>>) {
          if (block.type === "tool_use") uses.add(block.id as string);
          if (block.type === "tool_result") expect(uses).toContain(block.tool_use_id);
        }
      }
    }
    expect(api.requests.filter((request) => request.overflowed)).toEqual([]);
    await session.close();
  }, 30_000);
});

describe("overflow recovery", () => {
  it("compacts and retries the call once when the API answers 400 prompt is too long", async () => {
    const { api, model } = await start();
    const { session, events } = sessionOf(model, 200_000);
    for (let turn = 0; turn < 4; turn++) await session.send(filler(turn));
    api.push({
      error: { status: 400, message: "prompt is too long: 215000 tokens > 200000 maximum" },
    });
    const outcome = await session.send("and now?");
    expect(outcome.isError, outcome.result).toBe(false);
    expect(outcome.result).toBe("noted: and now?");
    const ends = events.filter((event) => event.type === "compaction_end");
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ trigger: "auto" });
    const last = api.mainRequests().at(-1) as RecordedRequest;
    expect(lastUserText(last)).toBe("and now?");
    expect(JSON.stringify(last.body.messages)).toContain("This session continues");
    await session.close();
  });

  it("ends the turn saying to use /compact or /clear when the retry is refused too", async () => {
    const refusal: ScriptStep = {
      error: { status: 400, message: "prompt is too long: 215000 tokens > 200000 maximum" },
    };
    const { api, model } = await start();
    const { session } = sessionOf(model, 200_000);
    for (let turn = 0; turn < 4; turn++) await session.send(filler(turn));
    api.push(refusal, { reply }, refusal);
    const outcome = await session.send("and now?");
    expect(outcome.isError).toBe(true);
    expect(outcome.result).toContain("prompt is too long");
    expect(outcome.result).toContain("/compact");
    expect(outcome.result).toContain("/clear");
    // The next message is not stuck behind the failure.
    const next = await session.send("still there?");
    expect(next.isError, next.result).toBe(false);
    await session.close();
  });

  it("reports a single message bigger than the window as an error instead of looping", async () => {
    const window = 2000;
    const { api, model } = await start({ window });
    const { session } = sessionOf(model, window);
    await session.send("hello");
    const outcome = await session.send(`huge: ${"word ".repeat(3000)}`);
    expect(outcome.isError).toBe(true);
    expect(outcome.result).toContain("prompt is too long");
    expect(outcome.result).toContain("/clear");
    expect(api.requests.length).toBeLessThan(8);
    await session.close();
  });
});

describe("what waits survives a compaction", () => {
  it("delivers a background notification pending across a compaction exactly once", async () => {
    const window = 3000;
    const { api, model } = await start({ window });
    const { session, events } = sessionOf(model, window);
    const threshold = session.context.budget.threshold;
    // Fill the window until the next message (with the notification) passes the threshold.
    for (let turn = 0; ; turn++) {
      const outcome = await session.send(filler(turn));
      if ((outcome.contextTokens ?? 0) > threshold - 120) break;
    }
    const taskId = session.background.start("printf 'finished-%s' output-42");
    await waitFor(() => session.background.tasks.get(taskId)?.status !== "running");
    const before = events.length;
    await session.send(`what did the task say? ${"padding ".repeat(60)}`);
    const turnEvents = events.slice(before).map((event) => event.type);
    expect(turnEvents.indexOf("inbox_delivered")).toBeGreaterThan(-1);
    expect(turnEvents.indexOf("compaction_end")).toBeGreaterThan(
      turnEvents.indexOf("inbox_delivered"),
    );
    for (let turn = 100; turn < 104; turn++) await session.send(filler(turn));
    const deliveries = events.filter(
      (event) => event.type === "inbox_delivered" && event.taskIds.includes(taskId),
    );
    expect(deliveries).toHaveLength(1);
    const carrying = api
      .mainRequests()
      .filter((request) => JSON.stringify(request.body.messages).includes("finished-output-42"));
    expect(carrying.length).toBeGreaterThan(0);
    // In each request, the notification appears at most once.
    for (const request of carrying) {
      const users = (request.body.messages as Array<{ role: string }>).filter(
        (message) => message.role === "user",
      );
      expect(JSON.stringify(users).split("finished-output-42").length).toBe(2);
    }
    await session.close();
  }, 30_000);

  it("keeps the system prompt and a steer that arrives during the compaction", async () => {
    const window = 3000;
    const { api, model } = await start({ window });
    const { session, events } = sessionOf(model, window);
    for (let turn = 0; turn < 8; turn++) await session.send(filler(turn));
    let steered = false;
    session.subscribe((event) => {
      if (event.type === "compaction_start" && !steered) {
        steered = true;
        void session.send("STEER-99 arrived meanwhile");
      }
    });
    for (let turn = 8; turn < 60 && !steered; turn++) await session.send(filler(turn));
    await waitFor(() => !session.running);
    expect(steered).toBe(true);
    expect(events.some((event) => event.type === "compaction_end")).toBe(true);
    const steeredRequests = api
      .mainRequests()
      .filter((request) => JSON.stringify(request.body.messages).includes("STEER-99"));
    expect(steeredRequests.length).toBeGreaterThan(0);
    for (const request of api.requests) {
      expect(JSON.stringify(request.body.system)).toContain("You are a test agent.");
    }
    await session.close();
  }, 30_000);
});

describe("/compact", () => {
  it("compacts on demand with a focus, ending as a local command", async () => {
    const { api, model } = await start();
    const { session, events } = sessionOf(model, 200_000);
    for (let turn = 0; turn < 3; turn++) await session.send(filler(turn));
    const outcome = await session.compact("the lorem parts");
    expect(outcome).toMatchObject({ isError: false, localCommand: "compact", numTurns: 0 });
    const request = api.mainRequests().at(-1) as RecordedRequest;
    expect(isSummaryRequest(request)).toBe(true);
    expect(lastUserText(request)).toContain("focus on: the lorem parts");
    expect(events.find((event) => event.type === "compaction_end")).toMatchObject({
      trigger: "manual",
    });
    expect(JSON.stringify(session.history[0])).toContain("This session continues");
    await session.close();
  });

  it("keeps only the summary and the last exchange, however big the window, and says the true sizes", async () => {
    const { api, model } = await start();
    // A 200k window keeps 20k tokens verbatim when compacting by itself: all of this would fit.
    const { session, events } = sessionOf(model, 200_000);
    const asked = [0, 1, 2].map((turn) => `${filler(turn)} ${"padding ".repeat(400)}`);
    for (const text of asked) await session.send(text);
    const outcome = await session.compact();
    expect(outcome.isError).toBe(false);
    expect(isSummaryRequest(api.mainRequests().at(-1) as RecordedRequest)).toBe(true);
    // The summary (with the last prompt after it), then the last reply: nothing else verbatim.
    expect(session.history).toHaveLength(2);
    const head = JSON.stringify(session.history[0]);
    expect(head).toContain("This session continues");
    expect(head).toContain(asked[2]);
    expect(JSON.stringify(session.history[1])).toContain("noted: turn 2");
    const end = events.find((event) => event.type === "compaction_end");
    if (end?.type !== "compaction_end") throw new Error("no compaction_end");
    expect(end.trigger).toBe("manual");
    expect(end.postTokens).toBeLessThan(end.preTokens);
    await session.close();
  });

  it("says when there is nothing to compact", async () => {
    const { model } = await start();
    const { session } = sessionOf(model, 200_000);
    const outcome = await session.compact();
    expect(outcome.isError).toBe(true);
    expect(outcome.result).toMatch(/nothing|not enough/i);
    await session.close();
  });
});
