/**
 * A Claude Code session's subagent transcripts move with their channel: two `rudder serve
 * --engine claude` workers on one PostgreSQL that share no disk. The real Claude Code CLI
 * (2.1.328, against the fake Messages API) runs a subagent (the Agent tool, in the foreground)
 * on the first worker, which writes `<session>/subagents/agent-<id>.jsonl` and `.meta.json`
 * beside the session file; both are stored in the database under their relative paths. The
 * first worker stops; the second takes the channel over and writes them back, byte for byte,
 * where its own Claude Code keeps them, before it resumes the session.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeSessionFile } from "../../src/claude-cli/session-file.js";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  type FakeMessagesApi,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { CLAUDE_CODE_BIN } from "../helpers/one-shot-engine.js";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { type RudderRun, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { type ServeWorker, startServeWorker } from "./serve-worker.js";

const TASK = "SUBAGENT-TASK: find the code word";

/** The main agent delegates to a subagent once; the subagent answers; then echo. */
function answer(request: RecordedRequest): ScriptStep {
  const messages = JSON.stringify(request.body.messages ?? []);
  if (messages.includes(TASK) && !messages.includes("DELEGATE")) {
    return { text: "the subagent found PEAR-9" };
  }
  const text = lastUserText(request);
  if (text.includes("DELEGATE") && !messages.includes("tool_result")) {
    return {
      toolUse: {
        name: "Agent",
        input: {
          description: "find the code word",
          prompt: TASK,
          subagent_type: "general-purpose",
          run_in_background: false,
        },
      },
    };
  }
  return { text: `noted: ${text.slice(-60)}` };
}

let root: string;
let cluster: PostgresCluster;
let api: FakeMessagesApi;
const running: RudderRun[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-subagents-"));
  cluster = await startPostgresCluster();
  api = await startFakeMessagesApi({ fallback: answer });
}, 120_000);

afterAll(async () => {
  for (const run of running) await stopRudder(run);
  await api?.close();
  await cluster?.destroy();
  rmSync(root, { recursive: true, force: true });
});

interface Worker extends ServeWorker {
  home: string;
  cwd: string;
}

/** A worker as on a machine of its own: its own HOME, `--data` and working folder. */
async function worker(name: string, store: string): Promise<Worker> {
  const home = join(root, name, "home");
  const cwd = join(root, name, "work");
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const args = ["--store", store, "--engine", "claude", "--lease-seconds", "2"];
  args.push("--cwd", cwd, "--no-sandbox");
  const env = { ...claudeCodeEnv(home, api.url), RUDDER_CLAUDE_BIN: CLAUDE_CODE_BIN };
  const started = await startServeWorker(join(root, name, "data"), args, { cwd, env, running });
  return { ...started, home, cwd };
}

interface Listed {
  messages: Array<{ id: string; kind: string; text: string; replyTo: string | null }>;
}

async function ask(through: Worker, channel: string, text: string) {
  const posted = await through.api<{ id: string }>("POST", `/api/channels/${channel}/messages`, {
    text,
  });
  return waitFor(
    async () => {
      const { messages } = await through.api<Listed>("GET", `/api/channels/${channel}/messages`);
      return messages.find((message) => message.replyTo === posted.id);
    },
    `the answer to ${text}`,
    90_000,
  );
}

/** The session's side folder on a worker: `<session>/` beside `<session>.jsonl`. */
function sideFolder(on: Worker, sessionId: string): string {
  const file = claudeSessionFile(
    { CLAUDE_CONFIG_DIR: join(on.home, ".claude") },
    on.cwd,
    sessionId,
  );
  return file.slice(0, -".jsonl".length);
}

async function storedFile(store: string, sessionId: string, file: string): Promise<Buffer> {
  const client = new pg.Client({ connectionString: store });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: Buffer }>(
      `SELECT bytes FROM transcript_chunks WHERE session_id = $1 AND file = $2
       ORDER BY start_offset`,
      [sessionId, file],
    );
    return Buffer.concat(rows.map((row) => row.bytes));
  } finally {
    await client.end();
  }
}

describe.skipIf(!existsSync(CLAUDE_CODE_BIN))("--engine claude with a subagent", () => {
  it("stores the subagent's transcript and writes it back on the worker that takes over", async () => {
    const store = await cluster.createDatabase("subagents");
    const first = await worker("first", store);
    const second = await worker("second", store);
    const channel = "delegating";

    const delegated = await ask(first, channel, "DELEGATE the search for the code word");
    expect(delegated.kind, delegated.text).toBe("reply");
    const { channels } = await first.api<{ channels: Array<{ sessionId: string | null }> }>(
      "GET",
      "/api/channels",
    );
    const sessionId = channels[0]!.sessionId!;
    // What Claude Code wrote for the subagent, beside the session file.
    const subagents = join(sideFolder(first, sessionId), "subagents");
    const names = readdirSync(subagents).sort();
    expect(names).toEqual([
      expect.stringMatching(/^agent-[0-9a-f]+\.jsonl$/),
      expect.stringMatching(/^agent-[0-9a-f]+\.meta\.json$/),
    ]);
    const transcript = readFileSync(join(subagents, names[0]!));
    expect(transcript.toString()).toContain(TASK);
    expect(transcript.toString()).toContain("the subagent found PEAR-9");
    // Stored before the answer was, under the path relative to the side folder.
    for (const name of names) {
      const bytes = await storedFile(store, sessionId, `subagents/${name}`);
      expect(bytes.equals(readFileSync(join(subagents, name))), name).toBe(true);
    }

    // A clean stop hands the channel over at once.
    first.run.child.kill("SIGTERM");
    await first.run.exited;
    expect(existsSync(sideFolder(second, sessionId))).toBe(false);
    const next = await ask(second, channel, "and what did the subagent find?");
    expect(next.kind, next.text).toBe("reply");
    const restored = join(sideFolder(second, sessionId), "subagents");
    for (const name of names) {
      expect(
        readFileSync(join(restored, name)).equals(readFileSync(join(subagents, name))),
        name,
      ).toBe(true);
    }
    expect(second.run.stderr()).toMatch(
      new RegExp(
        `restored the transcript of session ${sessionId} \\(channel ${channel}, \\d+ bytes\\) and 2 side files`,
      ),
    );
    // The resumed session went on from the conversation with the subagent's answer in it.
    const resumed = api
      .mainRequests()
      .filter((request) => lastUserText(request).includes("and what did the subagent find?"))
      .at(-1)!;
    expect(JSON.stringify(resumed.body.messages)).toContain("the subagent found PEAR-9");
  }, 240_000);
});
