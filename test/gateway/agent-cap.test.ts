// `--max-agents`: every agent process of a worker counts, one-shots included. Past the cap a
// message waits (stored, its POST told `waiting`) and is answered in order as processes free.
import { getEventListeners } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listDescendants } from "../../src/claude-cli/process-tree.js";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import {
  type ApiMessage,
  fakeLogEntries,
  startTestGateway,
  type TestGateway,
  testFolders,
} from "./helpers.js";

const CHANNELS = 40;
const MAX_AGENTS = 3;

/**
 * The agent processes alive of channels named `channelPrefix`...: children of this process (the
 * gateway runs here) that are the fake agent CLI or its launcher, not zombies, started for one of
 * those channels (the channel prompt in their arguments names it). What those start (the
 * launcher's `dirname`) is theirs, not an agent. Only this test's channels count: the test
 * worker may run other files' programs too (a full run once counted one more at both caps).
 */
function agentProcesses(channelPrefix: string): number {
  let count = 0;
  for (const { pid } of listDescendants(process.pid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const ours =
        commandLine.includes("fake-claude") && commandLine.includes(`channel "${channelPrefix}`);
      if (Number(parent) === process.pid && state !== "Z" && ours) {
        count += 1;
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return count;
}

/** What a gateway may add to the process's listeners, or to its signal's, once: not per agent. */
const FEW_LISTENERS = 3;

/** Every listener on `process`, whatever its event. */
function processListeners(): number {
  return process.eventNames().reduce((sum, name) => sum + process.listenerCount(name), 0);
}

let gateway: TestGateway | undefined;
const folders = testFolders("agent-cap");
afterEach(async () => {
  await gateway?.cleanup();
  gateway = undefined;
  folders.remove();
});

describe("the cap on all agent processes (--max-agents)", () => {
  it("never runs more than the cap and answers every message, in order", async () => {
    const fakeLog = join(folders.dataDir, "..", "cap.log");
    const listenersBefore = processListeners();
    const stopping = new AbortController();
    gateway = await startTestGateway({
      signal: stopping.signal,
      prefix: "agent-cap",
      maxLive: 1,
      maxAgents: MAX_AGENTS,
      engine: {
        claudeBin: FAKE_CLAUDE_SWITCH,
        env: { FAKE_CLAUDE_LOG: fakeLog, FAKE_CLAUDE_REPLY_DELAY_MS: "60" },
      },
    });
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, agentProcesses("cap-"));
    }, 5);
    const dispositions: string[] = [];
    try {
      for (let index = 0; index < CHANNELS; index += 1) {
        const posted = await gateway.api<{ disposition: string }>(
          "POST",
          `/api/channels/cap-${index}/messages`,
          { text: `cap message ${index}.` },
        );
        expect(posted.status).toBe(202);
        dispositions.push(posted.body.disposition);
      }
      const running = gateway;
      await waitFor(
        async () => {
          for (let index = 0; index < CHANNELS; index += 1) {
            const messages = await running.messages(`cap-${index}`);
            if (!messages.some((message) => message.kind === "reply")) return false;
          }
          return true;
        },
        "every channel answered",
        60_000,
      );
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(MAX_AGENTS);
    // Forty agents started and ended leave a fixed few listeners on the process and on the
    // gateway's signal, not one each (MaxListenersExceededWarning past ten).
    expect(processListeners() - listenersBefore).toBeLessThanOrEqual(FEW_LISTENERS);
    expect(getEventListeners(stopping.signal, "abort").length).toBeLessThanOrEqual(FEW_LISTENERS);
    expect(dispositions).toContain("waiting");
    expect(dispositions.filter((value) => value === "started")).toHaveLength(1);
    // The order agents were handed the messages: each within the cap of its place in line.
    const handed = fakeLogEntries(fakeLog)
      .filter((entry) => entry.event === "stdin")
      .map((entry) => /cap message (\d+)\./.exec(JSON.stringify(entry.message))?.[1])
      .filter((index) => index !== undefined)
      .map(Number);
    expect([...handed].sort((left, right) => left - right)).toEqual(
      Array.from({ length: CHANNELS }, (_, index) => index),
    );
    for (const [place, index] of handed.entries()) {
      expect(Math.abs(place - index)).toBeLessThan(MAX_AGENTS);
    }
  }, 90_000);
});

describe("admission under a backlog of agents to start", () => {
  it("answers every POST at once while agents wait and start, and answers each message once, in order", async () => {
    const channels = 3;
    const perChannel = 10;
    gateway = await startTestGateway({
      prefix: "admission",
      maxLive: 1,
      maxAgents: 2,
      engine: {
        claudeBin: FAKE_CLAUDE_SWITCH,
        env: { FAKE_CLAUDE_REPLY_DELAY_MS: "100" },
      },
    });
    const running = gateway;
    const accepted: number[] = [];
    const posted = new Map<string, string[]>();
    await Promise.all(
      Array.from({ length: channels }, async (_, channel) => {
        const channelId = `admit-${channel}`;
        const ids: string[] = [];
        posted.set(channelId, ids);
        for (let index = 0; index < perChannel; index += 1) {
          const sent = performance.now();
          const { status, body } = await running.api<{ id: string }>(
            "POST",
            `/api/channels/${channelId}/messages`,
            { text: `admit ${channel}.${index}` },
          );
          accepted.push(performance.now() - sent);
          expect(status).toBe(202);
          ids.push(body.id);
        }
      }),
    );
    const health = performance.now();
    expect((await running.api("GET", "/api/health")).status).toBe(200);
    const healthMs = performance.now() - health;
    const answered = await waitFor(
      async () => {
        const all = new Map<string, ApiMessage[]>();
        for (const channelId of posted.keys()) {
          const messages = await running.messages(channelId);
          const replies = messages.filter((message) => message.kind === "reply");
          if (!(posted.get(channelId) ?? []).every((id) => replies.some((r) => r.replyTo === id)))
            return undefined;
          all.set(channelId, messages);
        }
        return all;
      },
      "every message answered",
      60_000,
    );
    for (const [channelId, messages] of answered) {
      const ids = posted.get(channelId) ?? [];
      const replyTargets = messages
        .filter((message) => message.kind === "reply")
        .map((message) => message.replyTo);
      // Once each, in the order they were posted.
      expect(replyTargets).toEqual(ids);
    }
    // Admission waits on nothing but the store (each agent starts in a turn of the event loop
    // of its own, after the POSTs being stored): a few hundred ms at most on this shared
    // machine, where spawns made in the POSTs' path took them to 1.5-3.8 s; the bound leaves
    // room for a full test run's load.
    expect(Math.max(...accepted)).toBeLessThan(2_000);
    expect(healthMs).toBeLessThan(2_000);
  }, 90_000);
});

describe("every agent process counts: a /compact and a steer in the mix", () => {
  it("holds the cap; a /compact at the cap waits its turn (not refused), a steer joins its turn", async () => {
    gateway = await startTestGateway({
      prefix: "cap-mix",
      maxLive: 1,
      maxAgents: 2,
      engine: { claudeBin: FAKE_CLAUDE_SWITCH, env: { FAKE_CLAUDE_REPLY_DELAY_MS: "150" } },
    });
    const running = gateway;
    const post = async (channelId: string, text: string) => {
      const { status, body } = await running.api<{ id: string; disposition: string }>(
        "POST",
        `/api/channels/${channelId}/messages`,
        { text },
      );
      expect(status).toBe(202);
      return body;
    };
    // The channel to compact has a conversation, and the one kept process.
    await post("mix-compact", "hello");
    await waitFor(
      async () => (await running.messages("mix-compact")).some((m) => m.kind === "reply"),
      "the first answer",
    );
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, agentProcesses("mix-"));
    }, 5);
    const posted: string[] = [];
    try {
      // A one-shot turn and a steer into it; one-shots that wait (the kept process idle, stopped
      // to make room); the /compact, which must wait as they do, and channels waiting behind it
      // (admitted as it awaits its own process: the pool must not hand them its slot).
      const first = await post("mix-steer", "first");
      const second = await post("mix-steer", "second");
      expect(second.disposition).toBe("steered");
      posted.push(first.id, second.id);
      for (let index = 0; index < 4; index += 1) {
        posted.push((await post(`mix-${index}`, `one-shot ${index}`)).id);
      }
      const compact = await post("mix-compact", "/compact");
      for (let index = 4; index < 6; index += 1) {
        posted.push((await post(`mix-${index}`, `one-shot ${index}`)).id);
      }
      const channels = [
        "mix-steer",
        "mix-compact",
        ...Array.from({ length: 6 }, (_, i) => `mix-${i}`),
      ];
      const replies = await waitFor(
        async () => {
          const all: ApiMessage[] = [];
          for (const channelId of channels) all.push(...(await running.messages(channelId)));
          const ended = all.filter((m) => m.kind !== "user");
          const done = [...posted, compact.id].every((id) => ended.some((m) => m.replyTo === id));
          return done ? ended : undefined;
        },
        "every message and the /compact answered",
        60_000,
      );
      const compacted = replies.find((m) => m.replyTo === compact.id);
      expect(compacted?.kind, compacted?.text).toBe("compaction");
      for (const id of posted) expect(replies.find((m) => m.replyTo === id)?.kind).toBe("reply");
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
  }, 90_000);
});
