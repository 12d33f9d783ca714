import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionCatalog } from "../../src/agent/session-catalog.js";
import { TranscriptStore } from "../../src/agent/transcript-store.js";
import type { Message } from "../../src/model/types.js";

let directory: string;
let store: TranscriptStore;
let catalog: SessionCatalog;

const DAY_MS = 86_400_000;
const NOW = new Date("2026-06-15T12:00:00Z");

beforeEach(() => {
  directory = join(mkdtempSync(join(tmpdir(), "rudder-catalog-")), "sessions");
  store = new TranscriptStore(directory);
  catalog = new SessionCatalog(store);
});

afterEach(() => {
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

/** Writes a transcript the way `rudder run` does, then dates the file. */
function storeSession(id: string, cwd: string, history: Message[], modified: Date): void {
  store.writer(id, cwd).write(history);
  utimesSync(store.pathOf(id), modified, modified);
}

function conversation(prompt: string): Message[] {
  return [
    { role: "user", content: prompt },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "t1", name: "bash", input: { command: "ls" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "a\nb" }] },
    { role: "assistant", content: [{ type: "text", text: "Two files." }] },
  ];
}

function daysAgo(days: number): Date {
  return new Date(NOW.getTime() - days * DAY_MS);
}

describe("SessionCatalog", () => {
  it("lists sessions newest first, by folder or all of them", () => {
    storeSession("old-a", "/work/a", conversation("first in a"), daysAgo(3));
    storeSession("new-a", "/work/a", conversation("second in a"), daysAgo(1));
    storeSession("only-b", "/work/b", conversation("in b"), daysAgo(2));

    const all = catalog.list();
    expect(all.unreadable).toEqual([]);
    expect(all.sessions.map((session) => session.id)).toEqual(["new-a", "only-b", "old-a"]);
    expect(all.sessions[0]).toMatchObject({
      id: "new-a",
      cwd: "/work/a",
      messages: 4,
      firstPrompt: "second in a",
      updatedAt: daysAgo(1),
    });
    expect(all.sessions[0]?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    expect(catalog.list({ cwd: "/work/a" }).sessions.map((session) => session.id)).toEqual([
      "new-a",
      "old-a",
    ]);
    expect(catalog.list({ cwd: "/work/c" }).sessions).toEqual([]);
    expect(catalog.list({ limit: 2 }).sessions.map((session) => session.id)).toEqual([
      "new-a",
      "only-b",
    ]);
  });

  it("takes the first prompt from text blocks and the later line of a rewritten message", () => {
    store.writer("grown", "/work/a").write([{ role: "user", content: "draft" }]);
    appendFileSync(
      store.pathOf("grown"),
      `${JSON.stringify({ index: 0, message: { role: "user", content: [{ type: "text", text: "final\nprompt" }] } })}\n`,
    );
    const [summary] = catalog.list().sessions;
    expect(summary).toMatchObject({ messages: 1, firstPrompt: "final\nprompt" });
  });

  it("skips a hand-edited line whose content holds a block that is not an object", () => {
    storeSession("edited", "/work/a", conversation("before the edit"), daysAgo(1));
    appendFileSync(
      store.pathOf("edited"),
      '{"index":0,"message":{"role":"user","content":[null,{"type":"text","text":"x"}]}}\n',
    );
    const listing = catalog.list({ cwd: "/work/a" });
    expect(listing.sessions.map((session) => [session.id, session.firstPrompt])).toEqual([
      ["edited", "before the edit"],
    ]);
    const read = catalog.read("edited");
    expect(read.ok && read.transcript.history).toHaveLength(4);
  });

  it("skips a torn last line and reports a file that is not a transcript", () => {
    storeSession("torn", "/work/a", conversation("kept"), daysAgo(1));
    appendFileSync(store.pathOf("torn"), '{"index":4,"message":{"role":"user","con');
    utimesSync(store.pathOf("torn"), daysAgo(1), daysAgo(1));
    writeFileSync(join(directory, "garbage.jsonl"), "this is not JSON\n\u0000\u0001");
    utimesSync(join(directory, "garbage.jsonl"), daysAgo(2), daysAgo(2));
    mkdirSync(join(directory, "folder.jsonl"));
    writeFileSync(join(directory, "notes.txt"), "not a transcript at all");

    const listing = catalog.list({ cwd: "/work/a" });
    expect(listing.sessions.map((session) => [session.id, session.messages])).toEqual([
      ["torn", 4],
    ]);
    const problems = Object.fromEntries(
      listing.unreadable.map((entry) => [entry.id, entry.problem]),
    );
    expect(problems.garbage).toBe("not a rudder transcript (no session header)");
    expect(problems.folder).toContain("EISDIR");

    const read = catalog.read("garbage");
    expect(read).toEqual({
      ok: false,
      reason: "unreadable",
      problem: "not a rudder transcript (no session header)",
    });
    const torn = catalog.read("torn");
    expect(torn.ok && torn.transcript.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("reads one session and says when there is none", () => {
    storeSession("s1", "/work/a", conversation("hello"), daysAgo(1));
    const found = catalog.read("s1");
    expect(found.ok).toBe(true);
    if (found.ok) {
      expect(found.transcript.summary).toMatchObject({ id: "s1", messages: 4 });
      expect(found.transcript.history).toEqual(conversation("hello"));
    }
    expect(catalog.read("s2")).toEqual({ ok: false, reason: "not-found" });
    expect(catalog.read("../s1")).toEqual({ ok: false, reason: "not-found" });
  });

  it("removes by id and never outside the folder", () => {
    storeSession("s1", "/work/a", conversation("hello"), daysAgo(1));
    const outside = join(directory, "..", "precious.jsonl");
    writeFileSync(outside, "keep me");

    expect(catalog.remove("../precious")).toEqual({ ok: false, reason: "invalid-id" });
    expect(existsSync(outside)).toBe(true);
    expect(catalog.remove("s1")).toEqual({ ok: true });
    expect(existsSync(store.pathOf("s1"))).toBe(false);
    expect(catalog.remove("s1")).toEqual({ ok: false, reason: "not-found" });
    expect(catalog.list().sessions).toEqual([]);
  });

  it("prunes by modification time, unreadable files too, with a dry run first", () => {
    storeSession("fresh", "/work/a", conversation("fresh"), daysAgo(1));
    storeSession("stale", "/work/b", conversation("stale"), daysAgo(40));
    storeSession("older", "/work/a", conversation("older"), daysAgo(50));
    writeFileSync(join(directory, "broken.jsonl"), "{{{");
    utimesSync(join(directory, "broken.jsonl"), daysAgo(45), daysAgo(45));

    const planned = catalog.prune({ olderThanMs: 30 * DAY_MS, now: NOW, dryRun: true });
    expect(planned.removed.map((session) => [session.id, session.cwd])).toEqual([
      ["older", "/work/a"],
      ["broken", undefined],
      ["stale", "/work/b"],
    ]);
    expect(existsSync(store.pathOf("older"))).toBe(true);

    const done = catalog.prune({ olderThanMs: 30 * DAY_MS, now: NOW });
    expect(done.removed.map((session) => session.id)).toEqual(["older", "broken", "stale"]);
    expect(done.failed).toEqual([]);
    expect(catalog.list().sessions.map((session) => session.id)).toEqual(["fresh"]);
    expect(catalog.list().unreadable).toEqual([]);
  });

  it("lists nothing, without failing, when the folder does not exist yet", () => {
    expect(catalog.list()).toEqual({ sessions: [], unreadable: [] });
    expect(catalog.prune({ olderThanMs: DAY_MS })).toEqual({ removed: [], failed: [] });
  });
});
