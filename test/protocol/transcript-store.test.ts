import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  repairHistory,
  sessionsDirectory,
  TranscriptStore,
} from "../../src/agent/transcript-store.js";
import type { Message } from "../../src/model/types.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function store(): TranscriptStore {
  const root = mkdtempSync(join(tmpdir(), "rudder-transcripts-"));
  roots.push(root);
  return new TranscriptStore(join(root, "sessions"));
}

describe("TranscriptStore", () => {
  it("lives under RUDDER_HOME, else ~/.rudder", () => {
    expect(sessionsDirectory({ RUDDER_HOME: "/x/rh", HOME: "/home/u" })).toBe("/x/rh/sessions");
    expect(sessionsDirectory({ HOME: "/home/u" })).toBe("/home/u/.rudder/sessions");
  });

  it("appends only what changed, and a later line for an index replaces the earlier", () => {
    const transcripts = store();
    const writer = transcripts.writer("s1", "/work");
    const history: Message[] = [{ role: "user", content: "first" }];
    writer.write(history);
    writer.write(history);
    history[0] = {
      role: "user",
      content: [
        { type: "text", text: "first" },
        { type: "text", text: "steer" },
      ],
    };
    history.push({ role: "assistant", content: [{ type: "text", text: "reply" }] });
    writer.write(history);

    const lines = readFileSync(transcripts.pathOf("s1"), "utf8").trim().split("\n");
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      type: "session",
      session_id: "s1",
      cwd: "/work",
    });
    expect(transcripts.load("s1")).toEqual({ history, storedLength: 2 });
  });

  it("skips a torn last line and continues a resumed transcript without rewriting it", () => {
    const transcripts = store();
    const history: Message[] = [
      { role: "user", content: "one" },
      { role: "assistant", content: [{ type: "text", text: "two" }] },
    ];
    transcripts.writer("s2", "/work").write(history);
    appendFileSync(transcripts.pathOf("s2"), '{"index":2,"message":{"role":"us');
    const loaded = transcripts.load("s2");
    expect(loaded?.history).toEqual(history);

    const resumed = [...(loaded?.history ?? []), { role: "user", content: "three" } as Message];
    transcripts.writer("s2", "/work", loaded?.history).write(resumed);
    expect(transcripts.load("s2")?.history).toEqual(resumed);
  });

  it("writes the whole conversation again, header first, when its file is removed mid-session", () => {
    const transcripts = store();
    const writer = transcripts.writer("s3", "/work");
    const history: Message[] = [
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
    ];
    writer.write(history);
    rmSync(transcripts.pathOf("s3"));
    history.push({ role: "user", content: "three" });
    writer.write(history);
    const lines = readFileSync(transcripts.pathOf("s3"), "utf8").trim().split("\n");
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ type: "session", session_id: "s3" });
    expect(transcripts.load("s3")?.history).toEqual(history);
  });

  it("repairs a trailing tool_use without results", () => {
    const history: Message[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: {} }] },
    ];
    const repaired = repairHistory(history, new Date("2026-01-02T03:04:05Z"));
    expect(repaired).toHaveLength(3);
    expect(repaired[2]).toMatchObject({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "t1", is_error: true }],
    });
    const [result] = (repaired[2]?.content ?? []) as { content: string }[];
    expect(result?.content).toContain("Result unknown");
    expect(result?.content).toContain("its last record is from 2026-01-02T03:04:05.000Z");
    expect(result?.content).not.toMatch(/interrupted/i);
    expect(repairHistory(repaired)).toBe(repaired);
  });

  it("finds the latest session of a folder and refuses ids that are not file names", () => {
    const transcripts = store();
    transcripts.writer("a", "/one").write([{ role: "user", content: "a" }]);
    transcripts.writer("b", "/two").write([{ role: "user", content: "b" }]);
    expect(transcripts.latest("/one")).toBe("a");
    expect(transcripts.latest("/three")).toBeUndefined();
    expect(transcripts.exists("../etc/passwd")).toBe(false);
    expect(transcripts.load("nope")).toBeUndefined();
  });
});
