import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { contextBudget } from "../../src/agent/context-budget.js";
import { Session } from "../../src/agent/session.js";
import { readTranscript, TranscriptStore } from "../../src/agent/transcript-store.js";
import { createAnthropicModel } from "../../src/model/anthropic-model.js";
import { emptyRules } from "../../src/permissions/types.js";
import {
  type FakeMessagesApi,
  lastUserText,
  type RecordedRequest,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { cleanUpAfterEachTest, makeWorkspace } from "./kernel-helpers.js";

cleanUpAfterEachTest();

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const FACT = "deploy only on Tuesdays (FACT-5150)";
const isSummary = (request: RecordedRequest) =>
  lastUserText(request).includes("write a summary of the whole conversation");

async function fixture(window: number): Promise<{ api: FakeMessagesApi; store: TranscriptStore }> {
  const api = await startFakeMessagesApi({
    contextWindow: window,
    fallback: (request) =>
      isSummary(request)
        ? { text: "Goal: chat." }
        : { text: `ok ${lastUserText(request).slice(0, 60)}` },
  });
  const home = mkdtempSync(join(tmpdir(), "rudder-transcript-"));
  cleanups.push(
    () => api.close(),
    () => rmSync(home, { recursive: true, force: true }),
  );
  return { api, store: new TranscriptStore(join(home, "sessions")) };
}

function storedSession(api: FakeMessagesApi, store: TranscriptStore, window: number, id: string) {
  const loaded = store.load(id);
  const workspace = makeWorkspace();
  const writer = store.writer(id, workspace, loaded?.history.slice(0, loaded.storedLength) ?? []);
  return new Session({
    model: createAnthropicModel({
      model: "claude-haiku-5-5",
      apiKey: "k",
      baseURL: api.url,
      maxRetries: 0,
    }),
    tools: [],
    rules: emptyRules(),
    workspace,
    sessionId: id,
    contextBudget: contextBudget(window, 32_000),
    onHistoryChange: (history) => writer.write(history),
    onCompaction: (boundary, history) => writer.writeBoundary(boundary, history),
    ...(loaded === undefined ? {} : { history: loaded.history }),
    ...(loaded?.boundary === undefined ? {} : { compactedUserTexts: loaded.boundary.userTexts }),
  });
}

const filler = (turn: number) => `message ${turn}: ${"more words about the work ".repeat(6)}`;

describe("compaction in the transcript", () => {
  it("keeps the whole history, records each boundary, and resumes from the compacted state", async () => {
    const window = 3000;
    const { api, store } = await fixture(window);
    const id = "compacted-session";
    const session = storedSession(api, store, window, id);
    await session.send(`Rule: ${FACT}.`);
    for (let turn = 1; turn < 60; turn++) await session.send(filler(turn));
    await session.close();

    const transcript = readTranscript(store.pathOf(id));
    expect(transcript.segments.length).toBeGreaterThanOrEqual(3);
    expect(transcript.segments[0]?.boundary).toBeUndefined();
    for (const segment of transcript.segments.slice(1)) {
      expect(segment.boundary).toMatchObject({ trigger: "auto" });
      expect(segment.boundary?.postTokens).toBeLessThan(segment.boundary?.preTokens ?? 0);
    }
    // The whole conversation is on disk: every prompt was written once, before its boundary.
    const raw = readFileSync(store.pathOf(id), "utf8");
    for (let turn = 1; turn < 60; turn++) expect(raw).toContain(`message ${turn}:`);
    expect(JSON.stringify(transcript.segments[0]?.messages[0])).toContain(FACT);
    expect(transcript.history).toEqual(session.history);

    // Resumed: the compacted state, not the whole file, goes to the model, and it still fits.
    const before = api.requests.length;
    const resumed = storedSession(api, store, window, id);
    expect(resumed.history).toEqual(session.history);
    for (let turn = 60; turn < 90; turn++) {
      const outcome = await resumed.send(filler(turn));
      expect(outcome.isError, outcome.result).toBe(false);
    }
    await resumed.close();
    const later = api.requests.slice(before);
    expect(later.some(isSummary)).toBe(true);
    expect(later.filter((request) => request.overflowed)).toEqual([]);
    for (const request of later.filter((request) => !isSummary(request))) {
      expect(JSON.stringify(request.body.messages)).toContain(FACT);
    }
    expect(readTranscript(store.pathOf(id)).segments.length).toBeGreaterThan(
      transcript.segments.length,
    );
  }, 30_000);
});
