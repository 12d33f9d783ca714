/**
 * A channel's session file mirrored in the store (`TranscriptMirror`): what a turn appended is
 * stored as one chunk of whole lines, and another machine's worker writes the file back before
 * resuming it; stored chunks that make no valid file restore nothing, and the channel is told.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sessionAfterTakeover } from "../../src/gateway/cluster/session-takeover.js";
import { EventBus } from "../../src/gateway/event-bus.js";
import { SqliteGatewayStore } from "../../src/gateway/store/sqlite/sqlite-store.js";
import { TranscriptMirror } from "../../src/gateway/transcripts/transcript-mirror.js";
import { waitFor } from "../helpers/wait-for.js";

const folders: string[] = [];
const stores: SqliteGatewayStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function setup() {
  const root = mkdtempSync(join(tmpdir(), "rudder-mirror-"));
  folders.push(root);
  const store = new SqliteGatewayStore(join(root, "gateway.db"));
  stores.push(store);
  /** One machine's sessions folder, and a mirror writing from it. */
  const machine = (
    name: string,
    saveDelayMs = 50,
    compactAfter?: number,
    lookAgainMs?: number[],
  ) => {
    const folder = join(root, name, "sessions");
    mkdirSync(folder, { recursive: true });
    const logged: string[] = [];
    const mirror = new TranscriptMirror({
      store,
      sessionFile: (sessionId) => join(folder, `${sessionId}.jsonl`),
      saveDelayMs,
      ...(compactAfter ? { compactAfter } : {}),
      ...(lookAgainMs ? { lookAgainMs } : {}),
      logger: (line) => logged.push(line),
    });
    return { file: (sessionId: string) => join(folder, `${sessionId}.jsonl`), mirror, logged };
  };
  return { store, machine };
}

const line = (value: Record<string, unknown>) => `${JSON.stringify(value)}\n`;

describe("a channel's session file mirrored in the store", () => {
  it("looks at the file again after the agent's last line, for what the engine wrote later", async () => {
    const { store, machine } = setup();
    const here = machine("late", 50, undefined, [300, 3000]);
    const first = line({ type: "session", session_id: "s1" });
    writeFileSync(here.file("s1"), first);
    here.mirror.noteOutput("c", "s1");
    await waitFor(async () => (await store.transcriptChunks("s1")).length === 1, "the first save");
    // Written after the save that followed the agent's line, and no line since (a turn that
    // waits for its model): stored by a look again, not only when the turn ends.
    const prompt = line({ type: "user", text: "held" });
    appendFileSync(here.file("s1"), prompt);
    await waitFor(
      async () => (await store.transcriptChunks("s1")).length === 2,
      "the look again",
      3000,
    );
    const chunks = await store.transcriptChunks("s1");
    expect(chunks.map((chunk) => chunk.bytes.toString())).toEqual([first, prompt]);
    // The agent says more while a look again waits: saved after the short delay, not the long one.
    const more = line({ type: "assistant", text: "soon" });
    appendFileSync(here.file("s1"), more);
    const noted = Date.now();
    here.mirror.noteOutput("c", "s1");
    await waitFor(async () => (await store.transcriptChunks("s1")).length === 3, "the save");
    expect(Date.now() - noted).toBeLessThan(1500);
    await here.mirror.close();
  });

  it("stores only what the file gained since the last save, in whole lines at their offsets", async () => {
    const { store, machine } = setup();
    const here = machine("a");
    const turn1 = line({ type: "session", session_id: "s1" }) + line({ index: 0, text: "one" });
    writeFileSync(here.file("s1"), turn1);
    await here.mirror.flush("c", "s1");
    // The next turn, with a line still being written when the save runs.
    const turn2 = line({ index: 1, text: "two" });
    const half = '{"index":2,"te';
    appendFileSync(here.file("s1"), turn2 + half);
    await here.mirror.flush("c", "s1");
    let chunks = await store.transcriptChunks("s1");
    expect(chunks.map((chunk) => [chunk.offset, chunk.bytes.toString()])).toEqual([
      [0, turn1],
      [turn1.length, turn2],
    ]);
    // Nothing new: nothing stored. The rest of the line: stored from where the last chunk ended.
    await here.mirror.flush("c", "s1");
    expect(await store.transcriptChunks("s1")).toHaveLength(2);
    appendFileSync(here.file("s1"), 'xt":"three"}\n');
    await here.mirror.flush("c", "s1");
    chunks = await store.transcriptChunks("s1");
    expect(chunks.map((chunk) => chunk.bytes.length)).toEqual([
      turn1.length,
      turn2.length,
      '{"index":2,"text":"three"}\n'.length,
    ]);
    expect(
      Buffer.concat(chunks.map((chunk) => chunk.bytes)).equals(readFileSync(here.file("s1"))),
    ).toBe(true);
  });

  it("saves soon after the agent's output, without waiting for the turn to end", async () => {
    const { store, machine } = setup();
    const here = machine("a");
    writeFileSync(here.file("s1"), line({ type: "session" }));
    here.mirror.noteOutput("c", "s1");
    await waitFor(async () => (await store.transcriptLength("s1")) > 0, "the save after output");
    appendFileSync(here.file("s1"), line({ index: 0 }));
    // Output lines without a session id belong to the channel's current session.
    here.mirror.noteOutput("c", undefined);
    await waitFor(
      async () => (await store.transcriptLength("s1")) === readFileSync(here.file("s1")).length,
      "the second save",
    );
  });

  it("writes the file on another machine before it resumes there, and leaves a longer file alone", async () => {
    const { machine } = setup();
    const first = machine("a");
    const content = line({ type: "session" }) + line({ index: 0, text: "é" });
    writeFileSync(first.file("s1"), content);
    await first.mirror.flush("c", "s1");

    const second = machine("b");
    expect(existsSync(second.file("s1"))).toBe(false);
    expect(await second.mirror.restore("c", "s1")).toEqual({
      kind: "restored",
      bytes: Buffer.byteLength(content),
      side: { restored: 0, bytes: 0, problems: [] },
    });
    expect(readFileSync(second.file("s1"), "utf8")).toBe(content);
    // The new owner's next turn is stored after what was restored, not from the start.
    appendFileSync(second.file("s1"), line({ index: 1 }));
    await second.mirror.flush("c", "s1");
    expect(await second.mirror.restore("c", "s1")).toMatchObject({ kind: "local" });
    // The first machine's file is now the shorter one: restored whole, with the new turn.
    expect(await first.mirror.restore("c", "s1")).toMatchObject({ kind: "restored" });
    expect(readFileSync(first.file("s1"), "utf8")).toBe(readFileSync(second.file("s1"), "utf8"));
    expect(await second.mirror.restore("c", "unknown")).toEqual({ kind: "none" });
  });

  it("writes over a file here that went another way than the stored one after this worker left", async () => {
    const { machine } = setup();
    const a = machine("a");
    const b = machine("b");
    writeFileSync(a.file("s1"), line({ type: "session" }));
    await a.mirror.flush("c", "s1");
    await b.mirror.restore("c", "s1");
    // B's turn got this far before it lost the channel, unsaved; A carried on from the store.
    appendFileSync(b.file("s1"), line({ index: 0, text: "b's turn, never stored, and long" }));
    appendFileSync(a.file("s1"), line({ index: 0, text: "a's turn" }));
    await a.mirror.flush("c", "s1");
    expect(readFileSync(b.file("s1")).length).toBeGreaterThan(readFileSync(a.file("s1")).length);
    expect(await b.mirror.restore("c", "s1")).toMatchObject({ kind: "restored" });
    expect(readFileSync(b.file("s1"), "utf8")).toBe(readFileSync(a.file("s1"), "utf8"));
  });

  it("restores nothing from a chunk missing or a line that is not JSON, saying which", async () => {
    const { store, machine } = setup();
    const here = machine("b");
    const first = Buffer.from(line({ type: "session" }));
    await store.appendTranscript({ sessionId: "gap", channelId: "c", offset: 0, bytes: first });
    await store.appendTranscript({
      sessionId: "gap",
      channelId: "c",
      offset: first.length + 10,
      bytes: Buffer.from(line({ index: 1 })),
    });
    expect(await here.mirror.restore("c", "gap")).toEqual({
      kind: "failed",
      problem: `the chunk at byte ${first.length} is missing`,
    });
    expect(existsSync(here.file("gap"))).toBe(false);
    await store.appendTranscript({
      sessionId: "torn",
      channelId: "c",
      offset: 0,
      bytes: Buffer.concat([first, Buffer.from('{"index":0,"mess\n')]),
    });
    expect(await here.mirror.restore("c", "torn")).toEqual({
      kind: "failed",
      problem: `line 2 (at byte ${first.length}) is not a JSON object`,
    });
    expect(existsSync(here.file("torn"))).toBe(false);
  });

  it("stores a file rewritten rather than appended to again, whole", async () => {
    const { store, machine } = setup();
    const here = machine("a");
    writeFileSync(here.file("s1"), line({ type: "session", n: 1 }) + line({ index: 0 }));
    await here.mirror.flush("c", "s1");
    writeFileSync(
      here.file("s1"),
      `${line({ type: "session", n: 22 })}${line({ index: 0, more: true })}`,
    );
    await here.mirror.flush("c", "s1");
    const chunks = await store.transcriptChunks("s1");
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.bytes.equals(readFileSync(here.file("s1")))).toBe(true);
  });

  it("starts a channel whose transcript cannot be restored on a new conversation, and tells it", async () => {
    const { store, machine } = setup();
    const here = machine("b");
    await store.insertUserMessage("c", "hello", "http");
    await store.setChannelSession("c", "broken");
    await store.appendTranscript({
      sessionId: "broken",
      channelId: "c",
      offset: 5,
      bytes: Buffer.from(line({ index: 3 })),
    });
    const bus = new EventBus();
    const published: string[] = [];
    bus.listen("c", (numbered) => published.push(numbered.event.type));
    const logged: string[] = [];
    const options = {
      store,
      mirror: here.mirror,
      bus,
      logger: (text: string) => logged.push(text),
    };
    expect(await sessionAfterTakeover(options, "c", "broken")).toBeNull();
    expect(logged).toEqual([
      "gateway: cannot restore the transcript of session broken (channel c): the chunk at byte 0 is missing; starting a new conversation",
    ]);
    expect((await store.getChannel("c"))?.sessionId).toBeNull();
    // Nobody can resume it: its chunks are deleted.
    expect(await store.transcriptFiles("broken")).toEqual([]);
    const notice = (await store.listMessages("c")).at(-1);
    expect(notice).toMatchObject({ role: "system", kind: "error" });
    expect(notice?.text).toContain(
      "could not be restored on this worker (the chunk at byte 0 is missing)",
    );
    expect(notice?.text).toContain("starts a new conversation");
    expect(published).toContain("error");
    // A session that restores (or has nothing stored) is resumed as it is.
    expect(await sessionAfterTakeover(options, "c", "other")).toBe("other");
    expect(await sessionAfterTakeover(options, "c", null)).toBeNull();
  });

  it("merges a long session's newest chunks into one past the count, and restores the same file", async () => {
    const { store, machine } = setup();
    const here = machine("a", 50, 3);
    writeFileSync(here.file("s1"), line({ type: "session" }));
    await here.mirror.flush("c", "s1");
    const counts: number[] = [];
    for (let index = 0; index < 7; index++) {
      appendFileSync(here.file("s1"), line({ index }));
      await here.mirror.flush("c", "s1");
      counts.push((await store.transcriptChunks("s1")).length);
    }
    // Past three chunks the newest run is merged: all four at first (each no bigger than those
    // after it), later the three small ones after the merged chunk, which is bigger.
    expect(counts).toEqual([2, 3, 1, 2, 3, 2, 3]);
    const there = machine("b");
    expect(await there.mirror.restore("c", "s1")).toMatchObject({ kind: "restored" });
    expect(readFileSync(there.file("s1")).equals(readFileSync(here.file("s1")))).toBe(true);
  });

  it("stores the session's side files under their relative paths and restores them", async () => {
    const { store, machine } = setup();
    const a = machine("a");
    const sideFolder = (file: string) => file.replace(/\.jsonl$/, "");
    writeFileSync(a.file("s1"), line({ type: "session" }));
    const subagents = join(sideFolder(a.file("s1")), "subagents");
    mkdirSync(subagents, { recursive: true });
    writeFileSync(join(subagents, "agent-a1.jsonl"), line({ agentId: "a1", n: 1 }));
    // Claude Code's `.meta.json`: one JSON object, no newline, rewritten rather than appended.
    writeFileSync(join(subagents, "agent-a1.meta.json"), '{"finished":false}');
    await a.mirror.flush("c", "s1");
    appendFileSync(join(subagents, "agent-a1.jsonl"), line({ agentId: "a1", n: 2 }));
    writeFileSync(join(subagents, "agent-a1.meta.json"), '{"finished":true}');
    await a.mirror.flush("c", "s1");
    expect(await store.transcriptFiles("s1")).toEqual([
      { file: "", length: readFileSync(a.file("s1")).length, chunks: 1 },
      { file: "subagents/agent-a1.jsonl", length: expect.any(Number), chunks: 2 },
      { file: "subagents/agent-a1.meta.json", length: 17, chunks: 1 },
    ]);

    const b = machine("b");
    const restored = await b.mirror.restore("c", "s1");
    expect(restored).toMatchObject({ kind: "restored", side: { restored: 2, problems: [] } });
    for (const name of ["agent-a1.jsonl", "agent-a1.meta.json"]) {
      const there = join(sideFolder(b.file("s1")), "subagents", name);
      expect(readFileSync(there, "utf8")).toBe(readFileSync(join(subagents, name), "utf8"));
    }
    // A side file missing here is restored even when the session file is up to date.
    rmSync(join(sideFolder(b.file("s1")), "subagents", "agent-a1.jsonl"));
    expect(await b.mirror.restore("c", "s1")).toMatchObject({
      kind: "local",
      side: { restored: 1, problems: [] },
    });
    // A stored name that would leave the folder is refused, the rest restored as ever.
    await store.replaceTranscript("s1", "c", Buffer.from("{}\n"), "../escaped.jsonl");
    const c = machine("c");
    expect(await c.mirror.restore("c", "s1")).toMatchObject({
      kind: "restored",
      side: {
        restored: 2,
        problems: ['"../escaped.jsonl" is not a path inside the session\'s folder'],
      },
    });
    expect(existsSync(join(sideFolder(c.file("s1")), "..", "escaped.jsonl"))).toBe(false);
  });

  it("neither stores nor restores a side file Claude Code is still writing to rename over another", async () => {
    const { store, machine } = setup();
    const a = machine("a");
    const sideFolder = (file: string) => file.replace(/\.jsonl$/, "");
    writeFileSync(a.file("s1"), line({ type: "session" }));
    const subagents = join(sideFolder(a.file("s1")), "subagents");
    mkdirSync(subagents, { recursive: true });
    writeFileSync(join(subagents, "agent-a1.meta.json"), '{"finished":false}');
    // Caught between its write and its rename (Claude Code's `<name>.tmp.<pid>.<hex>`).
    writeFileSync(join(subagents, "agent-a1.meta.json.tmp.4242.0a1b2c"), '{"finished":true}');
    await a.mirror.flush("c", "s1");
    expect((await store.transcriptFiles("s1")).map(({ file }) => file)).toEqual([
      "",
      "subagents/agent-a1.meta.json",
    ]);
    // One stored by a worker from before this rule is not written back either.
    await store.replaceTranscript("s1", "c", Buffer.from("{}"), "subagents/x.meta.json.tmp.9f3e");
    const b = machine("b");
    expect(await b.mirror.restore("c", "s1")).toMatchObject({
      kind: "restored",
      side: { restored: 1, problems: [] },
    });
    expect(readdirSync(join(sideFolder(b.file("s1")), "subagents"))).toEqual([
      "agent-a1.meta.json",
    ]);
  });
});
