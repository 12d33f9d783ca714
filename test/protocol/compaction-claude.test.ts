import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  type FakeMessagesApi,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { startProcess } from "../helpers/owned-process.js";
import { type Line, protocolHarness, STREAM_ARGS } from "./helpers.js";

/**
 * The same conversation (a prompt, `/compact`, a prompt, `/clear`, a prompt; and one that
 * compacts by itself) through the real Claude Code 2.1.328 and through rudder, against the
 * fake Messages API: the lines each prints for compaction and `/clear` must have the same
 * shape (order, types, keys and the types of their values).
 */

const CLAUDE = resolve(".cache/claude-code/node_modules/.bin/claude");
const harness = protocolHarness();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await harness.cleanup();
});

const isSummary = (request: RecordedRequest) => {
  const text = lastUserText(request);
  // Claude Code's compaction prompt, and rudder's.
  return /summary of the conversation|write a summary of the whole conversation/i.test(text);
};

async function fakeApi(): Promise<FakeMessagesApi> {
  const api = await startFakeMessagesApi({
    fallback: (request): ScriptStep =>
      isSummary(request)
        ? { text: "<analysis>a</analysis>\n<summary>SUMMARY of the chat</summary>" }
        : { text: `echo: ${lastUserText(request).slice(-40)}` },
  });
  cleanups.push(() => api.close());
  return api;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Sends each message after the previous one's result; resolves with every line. */
function converse(
  child: ChildProcess,
  messages: readonly string[],
  timeoutMs = 60_000,
): Promise<Line[]> {
  const lines: Line[] = [];
  let buffer = "";
  let results = 0;
  const send = (text: string) =>
    child.stdin?.write(
      `${JSON.stringify({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" })}\n`,
    );
  return new Promise((resolveLines, reject) => {
    const timer = setTimeout(() => {
      killGroup(child);
      reject(new Error(`timed out: ${lines.map((line) => line.type).join(", ")}`));
    }, timeoutMs);
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      for (let index = buffer.indexOf("\n"); index !== -1; index = buffer.indexOf("\n")) {
        const text = buffer.slice(0, index);
        buffer = buffer.slice(index + 1);
        let line: Line;
        try {
          line = JSON.parse(text) as Line;
        } catch {
          continue;
        }
        lines.push(line);
        if (line.type !== "result") continue;
        results += 1;
        if (results < messages.length) send(messages[results] as string);
        else child.stdin?.end();
      }
    });
    child.on("exit", () => {
      clearTimeout(timer);
      resolveLines(lines);
    });
    send(messages[0] as string);
  });
}

async function claudeLines(
  messages: readonly string[],
  env: Record<string, string> = {},
): Promise<Line[]> {
  const api = await fakeApi();
  const home = mkdtempSync(join(tmpdir(), "rudder-claude-compact-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const claude = startProcess(CLAUDE, STREAM_ARGS.slice(1), {
    cwd: home,
    env: { ...claudeCodeEnv(home, api.url), ...env },
    stdin: "pipe",
  });
  cleanups.push(() => claude.kill());
  return converse(claude.child, messages);
}

async function rudderLines(
  messages: readonly string[],
  env: Record<string, string> = {},
): Promise<Line[]> {
  const api = await fakeApi();
  const sandbox = harness.sandbox(api);
  Object.assign(sandbox.env, env);
  const child = harness.start(sandbox);
  const lines = await converse(child.child, messages);
  return lines;
}

/** A value's shape: its JSON type, and for objects the shapes of their keys, sorted. */
function shape(value: unknown): unknown {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value !== "object") return typeof value;
  return Object.fromEntries(
    Object.keys(value as object)
      .sort()
      .map((key) => [key, shape((value as Record<string, unknown>)[key])]),
  );
}

/** The lines from the `index`-th result (exclusive) to the next one (inclusive). */
function turn(lines: Line[], index: number): Line[] {
  const ends = lines.flatMap((line, at) => (line.type === "result" ? [at] : []));
  return lines.slice(
    index === 0 ? 0 : (ends[index - 1] as number) + 1,
    (ends[index] as number) + 1,
  );
}

const kinds = (lines: Line[]) =>
  lines.map((line) => (line.subtype ? `${line.type}/${line.subtype}` : line.type));

describe("compaction lines, paired with Claude Code 2.1.328", () => {
  it("/compact and /clear print the lines Claude Code prints, in its order and shapes", async () => {
    const messages = ["remember FACT-31", "/compact", "and now?", "/clear", "fresh start"];
    const [claude, rudder] = await Promise.all([claudeLines(messages), rudderLines(messages)]);

    const claudeCompact = turn(claude, 1);
    const rudderCompact = turn(rudder, 1);
    expect(kinds(rudderCompact)).toEqual(kinds(claudeCompact));
    const boundaryOf = (lines: Line[]) =>
      lines.find((line) => line.subtype === "compact_boundary") as Line;
    expect(shape(boundaryOf(rudderCompact))).toEqual(shape(boundaryOf(claudeCompact)));
    expect(boundaryOf(rudderCompact).compact_metadata.trigger).toBe("manual");
    const statuses = (lines: Line[]) =>
      lines.filter((line) => line.subtype === "status").map((line) => shape(line));
    expect(statuses(rudderCompact)).toEqual(statuses(claudeCompact));
    const users = (lines: Line[]) =>
      lines
        .filter((line) => line.type === "user")
        .map((line) => ({ isSynthetic: line.isSynthetic, isReplay: line.isReplay }));
    expect(users(rudderCompact)).toEqual(users(claudeCompact));
    const resultOf = (lines: Line[]) => lines.at(-1) as Line;
    for (const key of ["local_command", "num_turns", "result", "is_error", "subtype"]) {
      expect(resultOf(rudderCompact)[key], key).toEqual(resultOf(claudeCompact)[key]);
    }

    const claudeClear = turn(claude, 3);
    const rudderClear = turn(rudder, 3);
    expect(kinds(rudderClear)).toEqual(kinds(claudeClear));
    expect(shape(rudderClear[0])).toEqual(shape(claudeClear[0]));
    for (const lines of [claudeClear, rudderClear]) {
      const reset = lines[0] as Line;
      expect(reset.new_conversation_id).toBe(reset.uuid);
      const init = lines.find((line) => line.subtype === "init") as Line;
      expect(init.session_id).not.toBe(reset.session_id);
      expect(resultOf(lines).session_id).toBe(init.session_id);
      expect(resultOf(lines).local_command).toBe("clear");
    }
    for (const [claudeLine, rudderLine] of [[resultOf(claude), resultOf(rudder)]] as const) {
      const model = (line: Line) => Object.values(line.modelUsage)[0] as Record<string, unknown>;
      for (const key of [
        "inputTokens",
        "outputTokens",
        "cacheReadInputTokens",
        "cacheCreationInputTokens",
        "contextWindow",
        "maxOutputTokens",
      ]) {
        expect(typeof model(rudderLine)[key], key).toBe(typeof model(claudeLine)[key]);
      }
    }
  }, 120_000);

  it("an automatic compaction prints a compact_boundary with trigger auto in both", async () => {
    // Claude Code's own system prompt is about 12,000 tokens: a 100,000-token window at 13%
    // compacts it at its second message; rudder's (about 1,500 tokens with its tools) gets a
    // window it passes after a few longer messages.
    const messages = ["first message", "second message", "third message"];
    const [claude, rudder] = await Promise.all([
      claudeLines(messages, {
        CLAUDE_CODE_AUTO_COMPACT_WINDOW: "100000",
        CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: "13",
      }),
      rudderLines(
        Array.from({ length: 6 }, (_, index) => `message ${index} ${"padding ".repeat(50)}`),
        { RUDDER_CONTEXT_WINDOW: "2600" },
      ),
    ]);
    const auto = (lines: Line[]) =>
      lines.find(
        (line) => line.subtype === "compact_boundary" && line.compact_metadata?.trigger === "auto",
      ) as Line;
    expect(auto(claude), kinds(claude).join(" ")).toBeDefined();
    expect(auto(rudder), kinds(rudder).join(" ")).toBeDefined();
    // Claude Code adds the uuids of the messages it kept; rudder's messages have none.
    const {
      preserved_segment: _segment,
      preserved_messages: _messages,
      ...claudeMetadata
    } = auto(claude).compact_metadata;
    expect(shape({ ...auto(rudder), compact_metadata: auto(rudder).compact_metadata })).toEqual(
      shape({ ...auto(claude), compact_metadata: claudeMetadata }),
    );
    const around = (lines: Line[]) => {
      const at = lines.indexOf(auto(lines));
      return kinds(lines.slice(at - 2, at + 2));
    };
    expect(around(rudder)).toEqual(around(claude));
  }, 120_000);
});
