/**
 * The prompts a resumed Claude Code session holds, read from its transcript as Claude Code
 * 2.1.328 writes it: those after the last assistant message that ended a turn, a message
 * delivered again is written as Claude Code's note to go on (once), anything else as ever.
 */
import { describe, expect, it } from "vitest";
import {
  HeldPrompts,
  RESUMED_TURN_NOTE,
  unfinishedTurnPrompts,
} from "../../src/claude-cli/held-prompts.js";
import { userLine } from "../../src/claude-cli/stream-lines.js";

const lines = (...entries: unknown[]) => entries.map((entry) => JSON.stringify(entry)).join("\n");
const user = (content: unknown, extra = {}) => ({
  type: "user",
  message: { role: "user", content },
  ...extra,
});
const assistant = (stop: string | null, content: unknown[] = [{ type: "text", text: "ok" }]) => ({
  type: "assistant",
  message: { role: "assistant", content, stop_reason: stop },
});

describe("unfinishedTurnPrompts", () => {
  it("takes the prompts after the last turn that ended, through tool calls and cut messages", () => {
    const transcript = lines(
      { type: "queue-operation" },
      user("answered before"),
      assistant("end_turn"),
      user("the question"),
      { type: "attachment", attachment: { type: "queued_command", prompt: "a steer" } },
      assistant("tool_use", [{ type: "tool_use", id: "t", name: "Bash", input: {} }]),
      user([{ type: "tool_result", tool_use_id: "t", content: "hi" }]),
      user("a reminder", { isMeta: true }),
      assistant(null),
    );
    expect(unfinishedTurnPrompts(`{"cut": "line from the ti\n${transcript}\n`)).toEqual([
      "the question",
      "a steer",
    ]);
  });

  it("holds nothing when the last turn ended, or there is no transcript", () => {
    expect(unfinishedTurnPrompts(lines(user("asked"), assistant("end_turn")))).toEqual([]);
    expect(unfinishedTurnPrompts("")).toEqual([]);
  });
});

describe("HeldPrompts", () => {
  it("writes a held message as the note to go on, once, and the rest as ever", () => {
    const written = userLine("the question", "u0").message as { content: string };
    const held = new HeldPrompts([written.content]);
    expect(held.lineFor("the question", "u1", false)).toEqual(
      userLine(RESUMED_TURN_NOTE, "u1", true),
    );
    expect(held.lineFor("the question", "u2", false)).toEqual(userLine("the question", "u2"));
    expect(held.lineFor("/compact", "u3", true)).toEqual(userLine("/compact", "u3", true));
  });
});
