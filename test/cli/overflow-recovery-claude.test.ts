import { cpSync, lstatSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
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
 * The window is set per engine just above its third request, so the fourth passes it. The
 * three turns before are the same in both cases: each engine runs them once, and each case
 * resumes the conversation from a copy of its files as they were after the third turn.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A summary for a compaction request, a long answer for anything else. */
const replies = (request: RecordedRequest): ScriptStep =>
  isSummary(request) ? { text: "<summary>S</summary>" } : { text: `ok ${"x".repeat(8000)}` };

async function fakeApi(contextWindow: number): Promise<FakeMessagesApi> {
  const api = await startFakeMessagesApi({ contextWindow, fallback: replies });
  cleanups.push(() => api.close());
  return api;
}

// biome-ignore lint/suspicious/noExplicitAny: a result line is whatever JSON the engine printed.
type Result = Record<string, any>;

/** Runs `kind` in `home` against `api`, with DISABLE_AUTO_COMPACT=1 if asked. */
async function runIn(
  kind: Engine,
  home: string,
  api: FakeMessagesApi,
  args: string[],
  disableAutoCompact = false,
) {
  const env = {
    ...oneShotEnv(kind, home, api.url),
    ...(disableAutoCompact ? { DISABLE_AUTO_COMPACT: "1" } : {}),
  };
  const done = await runOneShot(kind, ["--output-format", "json", ...args], { cwd: home, env });
  return { code: done.code, result: JSON.parse(done.stdout) as Result };
}

/** An engine's conversation of three turns: its home as it was then, its id, its last size. */
interface Opening {
  home: string;
  saved: string;
  id: string;
  tokens: number;
}

const openings = new Map<Engine, Promise<Opening>>();
afterAll(async () => {
  for (const opening of openings.values()) {
    const { home, saved } = await opening.catch(() => ({ home: "", saved: "" }));
    for (const folder of [home, saved])
      if (folder) rmSync(folder, { recursive: true, force: true });
  }
});

/**
 * Three short prompts with long replies, on an API without a window, once per engine; the
 * home is then copied aside (sockets left out: a running CLI's, gone with it).
 */
function openingOf(kind: Engine): Promise<Opening> {
  let opening = openings.get(kind);
  if (opening === undefined) {
    opening = (async () => {
      const home = realpathSync(mkdtempSync(join(tmpdir(), `rudder-overflow-${kind}-`)));
      const open = await startFakeMessagesApi({ fallback: replies });
      try {
        const first = await runIn(kind, home, open, ["remember the first long answer"]);
        expect(first.code).toBe(0);
        const id = first.result.session_id as string;
        for (const prompt of ["and a second one", "and a third one"]) {
          expect((await runIn(kind, home, open, ["--resume", id, prompt])).code).toBe(0);
        }
        const saved = `${home}-after-three`;
        cpSync(home, saved, { recursive: true, filter: (path) => !lstatSync(path).isSocket() });
        return { home, saved, id, tokens: open.mainRequests().at(-1)?.tokens as number };
      } finally {
        await open.close();
      }
    })();
    openings.set(kind, opening);
  }
  return opening;
}

async function overflowingTurn(kind: Engine, disableAutoCompact: boolean) {
  const { home, saved, id, tokens } = await openingOf(kind);
  rmSync(home, { recursive: true, force: true });
  cpSync(saved, home, { recursive: true });
  // A fourth turn on an API whose window is just above the third request: the refused request's
  // compaction must drop the oldest exchange to fit, and what it leaves (the user's own words
  // are kept) fits.
  const tight = await fakeApi(tokens + 1500);
  const second = await runIn(
    kind,
    home,
    tight,
    ["--resume", id, `fourth ${"z".repeat(2400)}`],
    disableAutoCompact,
  );
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
