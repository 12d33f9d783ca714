/**
 * Transcripts in the database: two `rudder serve` workers on one PostgreSQL that share no data
 * folder, no HOME and no working folder (as on two machines). The channel's owner is killed
 * with SIGKILL mid-turn; the other worker takes the channel over, writes the session file back
 * from the database where its engine reads it (rudder's sessions folder, or Claude Code's
 * project folder for its own cwd), answers the unanswered message once, and the model is sent
 * the earlier turns. For rudder and for the real Claude Code CLI (`--engine claude`).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESUMED_TURN_NOTE } from "../../src/claude-cli/held-prompts.js";
import { claudeSessionFile } from "../../src/claude-cli/session-file.js";
import {
  type FakeMessagesApi,
  lastUserText,
  type RecordedRequest,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import {
  type Engine,
  type EngineWorker,
  type ListedMessages,
  startEngineWorker,
} from "./serve-worker.js";

let root: string;
let cluster: PostgresCluster;
let api: FakeMessagesApi;
/** The first request asking to hold is left hanging (the turn the owner is killed in). */
let holding = true;
const running: RudderRun[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-transcripts-"));
  cluster = await startPostgresCluster();
  api = await startFakeMessagesApi({
    fallback: (request) => {
      const text = lastUserText(request);
      if (text.includes("HOLD") && holding) {
        holding = false;
        return { hangUntilAborted: true, text: "thinking" };
      }
      return { text: `noted: ${text.slice(-60)}` };
    },
  });
}, 120_000);

afterAll(async () => {
  for (const run of running) await stopRudder(run);
  await api?.close();
  await cluster?.destroy();
  rmSync(root, { recursive: true, force: true });
});

type Worker = EngineWorker;

/** A worker as on a machine of its own: its own HOME, `--data` and working folder. */
function worker(name: string, store: string, engine: Engine): Promise<Worker> {
  return startEngineWorker(join(root, name), engine, api.url, running, {
    args: ["--store", store, "--lease-seconds", "2"],
    cwdName: "work space",
  });
}

type Listed = ListedMessages;

const post = (through: Worker, channel: string, text: string) =>
  through.api<{ id: string; disposition: string }>("POST", `/api/channels/${channel}/messages`, {
    text,
  });

function replyTo(through: Worker, channel: string, messageId: string) {
  return waitFor(
    async () => {
      const { messages } = await through.api<Listed>("GET", `/api/channels/${channel}/messages`);
      return messages.find((message) => message.replyTo === messageId);
    },
    `the answer to ${messageId}`,
    90_000,
  );
}

/** The main requests whose last user text includes `marker`. */
function requestsFor(marker: string): RecordedRequest[] {
  return api.mainRequests().filter((request) => lastUserText(request).includes(marker));
}

/** The main requests whose messages hold `text` anywhere. */
function requestsHolding(text: string): RecordedRequest[] {
  return api
    .mainRequests()
    .filter((request) => JSON.stringify(request.body.messages ?? []).includes(text));
}

async function storedBytes(store: string, sessionId: string): Promise<number> {
  const client = new pg.Client({ connectionString: store });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT coalesce(max(end_offset), 0)::int AS n FROM transcript_chunks WHERE session_id = $1",
      [sessionId],
    );
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}

/** Linux's parent-death signal, which the gateway sets for its agents through setpriv. */
const parentDeathSignal = existsSync("/usr/bin/setpriv");

/**
 * SIGKILL of a worker. A SIGKILLed gateway cannot stop its agents (each in a process group of
 * its own), so the kernel does: the parent-death signal's SIGTERM, which the agent (rudder, or
 * the real Claude Code) obeys mid-turn. Without setpriv the test kills the agent itself.
 */
async function killWorker(doomed: Worker): Promise<void> {
  const { runners } = await doomed.api<{ runners: Array<{ pid: number | null }> }>(
    "GET",
    "/api/runners",
  );
  expect(runners.length).toBeGreaterThan(0);
  doomed.run.kill();
  for (const { pid } of parentDeathSignal ? [] : runners) {
    if (pid === null) continue;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await doomed.run.exited;
  await waitFor(() => {
    return runners.every(({ pid }) => {
      if (pid === null || !isAlive(pid)) return true;
      // A zombie is dead (this container's PID 1 reaps no orphans).
      return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === true;
    });
  }, "the killed agent to be dead");
}

function sessionFile(engine: Engine, on: Worker, sessionId: string): string {
  return engine === "rudder"
    ? join(on.home, ".rudder", "sessions", `${sessionId}.jsonl`)
    : claudeSessionFile({ CLAUDE_CONFIG_DIR: join(on.home, ".claude") }, on.cwd, sessionId);
}

describe.each(["rudder", "claude"] as const)(
  "--engine %s on two workers sharing no disk",
  (engine) => {
    it("resumes a channel whose owner was killed mid-turn from the transcript in the database", async () => {
      holding = true;
      const store = await cluster.createDatabase(`transcripts_${engine}`);
      const doomed = await worker(`${engine}-doomed`, store, engine);
      const survivor = await worker(`${engine}-survivor`, store, engine);
      const channel = `moving-${engine}`;

      const first = await post(doomed, channel, "remember the code word PLUM-7");
      expect(first.disposition).toBe("started");
      expect((await replyTo(doomed, channel, first.id)).kind).toBe("reply");
      const { channels } = await doomed.api<{ channels: Array<{ sessionId: string | null }> }>(
        "GET",
        "/api/channels",
      );
      const sessionId = channels[0]?.sessionId;
      expect(sessionId).toEqual(expect.any(String));
      // Stored in the database before the answer was: the whole file as the first turn left it.
      const afterFirst = readFileSync(sessionFile(engine, doomed, sessionId!));
      expect(await storedBytes(store, sessionId!)).toBe(afterFirst.length);

      const hold = `HOLD-${engine}, then say the code word`;
      const second = await post(doomed, channel, hold);
      expect(second.disposition).toBe("started");
      await waitFor(() => requestsFor(hold).length === 1, "the held turn's request", 60_000);
      // Stored as the turn goes, not only when it ends: the held turn's start is in the database.
      await waitFor(
        async () => (await storedBytes(store, sessionId!)) > afterFirst.length,
        "the held turn's start stored mid-turn",
      );
      await killWorker(doomed);
      expect(existsSync(sessionFile(engine, survivor, sessionId!))).toBe(false);

      const answer = await replyTo(survivor, channel, second.id);
      expect(answer.kind).toBe("reply");
      // The survivor's agent resumed from the restored file: the model saw the first turn, and
      // the held message once (Claude Code's session already holds it: it is sent Claude Code's
      // own note to go on with the restarted turn instead of the message again).
      const withHeld = requestsHolding(hold);
      expect(withHeld).toHaveLength(2);
      const resumed = JSON.stringify(withHeld.at(-1)!.body.messages);
      expect(resumed.split(hold)).toHaveLength(2);
      if (engine === "claude") expect(resumed).toContain(RESUMED_TURN_NOTE);
      expect(resumed).toContain("remember the code word PLUM-7");
      expect(resumed).toContain("noted: ");
      const restored = readFileSync(sessionFile(engine, survivor, sessionId!));
      expect(restored.subarray(0, afterFirst.length).equals(afterFirst)).toBe(true);
      expect(restored.toString()).toContain(hold);
      expect(survivor.run.stderr()).toContain(`restored the transcript of session ${sessionId}`);

      const ask = `and what was my first message, ${engine}?`;
      const third = await post(survivor, channel, ask);
      expect((await replyTo(survivor, channel, third.id)).kind).toBe("reply");
      const next = JSON.stringify(requestsFor(ask).at(-1)!.body.messages);
      expect(next).toContain("remember the code word PLUM-7");
      expect(next).toContain(hold);

      // Each message answered exactly once, by one worker or the other.
      const { messages } = await survivor.api<Listed>("GET", `/api/channels/${channel}/messages`);
      expect(messages.map((message) => message.kind)).toEqual([
        "user",
        "reply",
        "user",
        "reply",
        "user",
        "reply",
      ]);
      expect(messages.filter((message) => message.kind === "user").map((m) => m.state)).toEqual([
        "answered",
        "answered",
        "answered",
      ]);
    }, 240_000);
  },
);

describe("a stored transcript that cannot be restored", () => {
  it("starts the channel on a new conversation once, saying so, instead of looping", async () => {
    const store = await cluster.createDatabase("transcripts_broken");
    const first = await worker("broken-first", store, "rudder");
    const second = await worker("broken-second", store, "rudder");
    const channel = "broken";
    const opening = await post(first, channel, "remember the code word FIG-3");
    await replyTo(first, channel, opening.id);
    const { channels } = await first.api<{ channels: Array<{ sessionId: string | null }> }>(
      "GET",
      "/api/channels",
    );
    const sessionId = channels[0]!.sessionId!;
    // The first byte of the stored file damaged: its first line is no longer JSON.
    const client = new pg.Client({ connectionString: store });
    await client.connect();
    try {
      const { rowCount } = await client.query(
        `UPDATE transcript_chunks SET bytes = overlay(bytes PLACING '#'::bytea FROM 1 FOR 1)
         WHERE session_id = $1 AND start_offset = 0`,
        [sessionId],
      );
      expect(rowCount).toBe(1);
    } finally {
      await client.end();
    }
    // A clean stop hands the channel over at once.
    first.run.child.kill("SIGTERM");
    await first.run.exited;

    const next = await post(second, channel, "what was the code word?");
    await replyTo(second, channel, next.id);
    const later = await post(second, channel, "and now?");
    await replyTo(second, channel, later.id);
    const { messages } = await second.api<Listed>("GET", `/api/channels/${channel}/messages`);
    expect(messages.map((message) => message.kind)).toEqual([
      "user",
      "reply",
      "error",
      "user",
      "reply",
      "user",
      "reply",
    ]);
    expect(messages[2]?.text).toBe(
      `The earlier conversation (session ${sessionId}) could not be restored on this worker ` +
        "(line 1 (at byte 0) is not a JSON object), so this channel starts a new conversation.",
    );
    const failures = second.run
      .stderr()
      .split("\n")
      .filter((line) => line.includes("cannot restore the transcript"));
    expect(failures).toEqual([
      `gateway: cannot restore the transcript of session ${sessionId} (channel ${channel}): line 1 (at byte 0) is not a JSON object; starting a new conversation`,
    ]);
    // A new conversation: the model is not sent the old one, and the channel has a new session.
    expect(
      JSON.stringify(requestsFor("what was the code word?").at(-1)!.body.messages),
    ).not.toContain("FIG-3");
    expect(JSON.stringify(requestsFor("and now?").at(-1)!.body.messages)).toContain(
      "what was the code word?",
    );
    const after = await second.api<{ channels: Array<{ sessionId: string | null }> }>(
      "GET",
      "/api/channels",
    );
    expect(after.channels[0]?.sessionId).toEqual(expect.any(String));
    expect(after.channels[0]?.sessionId).not.toBe(sessionId);
  }, 120_000);
});
