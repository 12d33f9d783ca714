import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import {
  type Engine as EngineKind,
  isSummaryRequest as isSummary,
  type OneShot,
  oneShotEnv,
  runOneShot,
} from "../helpers/one-shot-engine.js";

/**
 * `rudder run "/compact"` and `rudder run "/clear"` on a resumed conversation, in text and json
 * output, next to the real Claude Code 2.1.328's `claude -p` doing the same against the same
 * fake Messages API: neither sends the command to the model; `/compact` summarizes the
 * conversation (one request) and keeps its id, `/clear` starts a new one that `--continue`
 * then picks.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Engine {
  api: FakeMessagesApi;
  /** Runs the executable with `args` as they are (no `-p` or `run` before them). */
  exec: (args: string[]) => Promise<OneShot>;
  run: (args: string[]) => Promise<OneShot>;
}

async function engine(kind: EngineKind): Promise<Engine> {
  const api = await startFakeMessagesApi({
    fallback: (request): ScriptStep =>
      isSummary(request)
        ? { text: "<analysis>a</analysis>\n<summary>SUMMARY of the chat</summary>" }
        : { text: `echo: ${lastUserText(request).slice(-30)}` },
  });
  const home = realpathSync(mkdtempSync(join(tmpdir(), `rudder-run-commands-${kind}-`)));
  cleanups.push(async () => {
    await api.close();
    rmSync(home, { recursive: true, force: true });
  });
  const env = oneShotEnv(kind, home, api.url);
  return {
    api,
    exec: (args) => runOneShot(kind, args, { cwd: home, env, command: false }),
    run: (args) => runOneShot(kind, args, { cwd: home, env }),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: a result line is whatever JSON the engine printed.
type Result = Record<string, any>;

/** The scenario, run the same way by either engine; what each step printed. */
async function scenario({ api, run }: Engine) {
  const json = async (...args: string[]): Promise<Result> => {
    const done = await run(["--output-format", "json", ...args]);
    expect(done.code, done.stderr).toBe(0);
    return JSON.parse(done.stdout) as Result;
  };
  const first = await json("remember FACT-31");
  const id = first.session_id as string;
  const before = api.mainRequests().length;
  const compacted = await json("--resume", id, "/compact");
  const compactRequests = api.mainRequests().slice(before);
  const afterCompact = await json("--resume", id, "what was the fact?");
  const compactText = await run(["--resume", id, "/compact keep the fact"]);
  const cleared = await json("--resume", id, "/clear");
  const continued = await json("--continue", "a fresh start");
  const clearText = await run(["--continue", "/clear"]);
  return {
    id,
    compacted,
    compactRequests,
    afterCompact,
    afterCompactRequest: api
      .mainRequests()
      .find((request) => lastUserText(request).includes("what was the fact?")),
    compactText,
    cleared,
    continued,
    continuedRequest: api.mainRequests().at(-1),
    clearText,
    everyUserText: api.mainRequests().map((request) => lastUserText(request)),
  };
}

const RESULT_KEYS = ["type", "subtype", "is_error", "result", "num_turns", "local_command"];
const pick = (line: Result) => Object.fromEntries(RESULT_KEYS.map((key) => [key, line[key]]));

describe("rudder run /compact and /clear, paired with Claude Code 2.1.328", () => {
  it("acts on the resumed conversation and prints what claude -p prints", async () => {
    const rudderEngine = await engine("rudder");
    const [claude, rudder] = await Promise.all([
      engine("claude").then(scenario),
      scenario(rudderEngine),
    ]);

    for (const side of [claude, rudder]) {
      // No command reached the model as a prompt (Claude Code mentions them, as context, in the
      // next prompt's message).
      const prompts = side.everyUserText.map((text) => text.trim());
      expect(prompts.filter((text) => /\/(compact|clear)[^<]*$/.test(text))).toEqual([]);
      // `/compact` is one summary request, and the conversation keeps its id.
      expect(side.compactRequests).toHaveLength(1);
      expect(isSummary(side.compactRequests[0] as RecordedRequest)).toBe(true);
      expect(side.compacted.session_id).toBe(side.id);
      expect(side.afterCompact.session_id).toBe(side.id);
      const resumed = JSON.stringify(side.afterCompactRequest?.body.messages);
      expect(resumed).toContain("SUMMARY of the chat");
      // `/clear`: a new conversation, the one `--continue` picks, without the old one.
      expect(side.cleared.session_id).not.toBe(side.id);
      expect(side.continued.session_id).toBe(side.cleared.session_id);
      expect(JSON.stringify(side.continuedRequest?.body.messages)).not.toContain("FACT-31");
    }
    // `rudder sessions show` marks both compactions of the first conversation.
    const shown = await rudderEngine.exec(["sessions", "show", rudder.id]);
    expect(shown.code).toBe(0);
    expect(
      shown.stdout.match(/\u2500\u2500 compacted: \S+ -> \S+ tokens \(manual, /g),
    ).toHaveLength(2);
    expect(pick(rudder.compacted)).toEqual(pick(claude.compacted));
    expect(pick(rudder.compacted)).toMatchObject({
      result: "",
      is_error: false,
      local_command: "compact",
      num_turns: 0,
    });
    expect(pick(rudder.cleared)).toEqual(pick(claude.cleared));
    expect(rudder.cleared.local_command).toBe("clear");
    expect({ code: rudder.compactText.code, stdout: rudder.compactText.stdout }).toEqual({
      code: claude.compactText.code,
      stdout: claude.compactText.stdout,
    });
    expect(rudder.compactText.stdout).toBe("\n");
    expect({ code: rudder.clearText.code, stdout: rudder.clearText.stdout }).toEqual({
      code: claude.clearText.code,
      stdout: claude.clearText.stdout,
    });
  }, 300_000);
});
