import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import {
  type Engine,
  isSummaryRequest as isSummary,
  oneShotEnv,
  runOneShot,
} from "../helpers/one-shot-engine.js";

/**
 * A resumed turn the API refuses as too long (`prompt is too long`), with and without
 * `DISABLE_AUTO_COMPACT=1`, through the real Claude Code 2.1.328 and through `rudder run`:
 * without it both compact and answer; with it neither compacts, and the turn ends in error.
 * The window is set per engine just above its third request, so the fourth passes it.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fakeApi(contextWindow?: number): Promise<FakeMessagesApi> {
  const api = await startFakeMessagesApi({
    ...(contextWindow === undefined ? {} : { contextWindow }),
    fallback: (request) =>
      isSummary(request) ? { text: "<summary>S</summary>" } : { text: `ok ${"x".repeat(8000)}` },
  });
  cleanups.push(() => api.close());
  return api;
}

// biome-ignore lint/suspicious/noExplicitAny: a result line is whatever JSON the engine printed.
type Result = Record<string, any>;

async function overflowingTurn(kind: Engine, disableAutoCompact: boolean) {
  const home = realpathSync(mkdtempSync(join(tmpdir(), `rudder-overflow-${kind}-`)));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const run = async (api: FakeMessagesApi, args: string[]) => {
    const env = {
      ...oneShotEnv(kind, home, api.url),
      ...(disableAutoCompact ? { DISABLE_AUTO_COMPACT: "1" } : {}),
    };
    const done = await runOneShot(kind, ["--output-format", "json", ...args], { cwd: home, env });
    return { code: done.code, result: JSON.parse(done.stdout) as Result };
  };
  // Three short prompts with long replies, on an API without a window; then a fourth turn on
  // one whose window is just above the third request: the refused request's compaction must
  // drop the oldest exchange to fit, and what it leaves (the user's own words are kept) fits.
  const open = await fakeApi();
  const first = await run(open, ["remember the first long answer"]);
  expect(first.code).toBe(0);
  const id = first.result.session_id as string;
  for (const prompt of ["and a second one", "and a third one"]) {
    expect((await run(open, ["--resume", id, prompt])).code).toBe(0);
  }
  const base = open.mainRequests().at(-1)?.tokens as number;
  const tight = await fakeApi(base + 1500);
  const second = await run(tight, ["--resume", id, `fourth ${"z".repeat(2400)}`]);
  const requests = tight.requests.filter((request) => request.path === "/v1/messages");
  return {
    second,
    refused: requests.filter((request) => request.overflowed).length,
    summaries: tight.mainRequests().filter(isSummary).length,
  };
}

describe("overflow recovery and DISABLE_AUTO_COMPACT, paired with Claude Code 2.1.328", () => {
  it("compacts and answers a refused turn, as claude -p does", async () => {
    const [claude, rudder] = await Promise.all([
      overflowingTurn("claude", false),
      overflowingTurn("rudder", false),
    ]);
    for (const side of [claude, rudder]) {
      expect(side.refused).toBeGreaterThanOrEqual(1);
      expect(side.summaries).toBeGreaterThanOrEqual(1);
      expect(side.second.code, JSON.stringify({ ...side, second: side.second.result.result })).toBe(
        0,
      );
      expect(side.second.result.is_error).toBe(false);
    }
  }, 240_000);

  it("with DISABLE_AUTO_COMPACT=1 neither compacts: the turn ends in error", async () => {
    const [claude, rudder] = await Promise.all([
      overflowingTurn("claude", true),
      overflowingTurn("rudder", true),
    ]);
    for (const side of [claude, rudder]) {
      expect(side.refused).toBe(1);
      expect(side.summaries).toBe(0);
      expect(side.second.code).toBe(1);
      expect(side.second.result.is_error).toBe(true);
    }
    expect(claude.second.result.result).toBe("Prompt is too long");
    expect(rudder.second.result.result).toMatch(/too long/i);
  }, 240_000);
});
