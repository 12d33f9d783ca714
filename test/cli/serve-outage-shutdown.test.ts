/**
 * `rudder serve --store postgres://...` stopped with SIGTERM while its database is down, holding
 * the answer of a turn that ended during the outage: it waits up to --shutdown-wait for the
 * database, stores the answer once it is back, and the next owner of the channel does not
 * redo the turn (meanwhile its health and a message are 503s saying it is shutting down); a wait
 * that runs out names what was not stored, and the next owner answers it.
 * A real PostgreSQL server, stopped and started; fake Claude CLIs as agents.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDescendants } from "../../src/claude-cli/process-tree.js";
import { fakeLogEntries } from "../gateway/helpers.js";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { type ServeWorker, startServeWorker } from "./serve-worker.js";

let root: string;
let cluster: PostgresCluster;
const running: RudderRun[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-outage-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "workspace"));
  cluster = await startPostgresCluster();
});

afterAll(async () => {
  for (const run of running) await stopRudder(run);
  await cluster?.destroy();
  rmSync(root, { recursive: true, force: true });
});

/** A worker on `store` whose agents are the fake CLI in `scenario`, logging to `<name>.log`. */
function worker(name: string, store: string, scenario: string, args: string[] = []) {
  writeFileSync(join(root, `${name}.scenario`), scenario);
  return startServeWorker(
    join(root, name),
    ["--store", store, "--engine", "claude", "--lease-seconds", "2", ...args],
    {
      cwd: join(root, "workspace"),
      env: {
        PATH: process.env.PATH,
        HOME: join(root, "home"),
        RUDDER_CLAUDE_BIN: FAKE_CLAUDE_SWITCH,
        GATEWAY_TEST_SCENARIO_FILE: join(root, `${name}.scenario`),
        FAKE_CLAUDE_LOG: join(root, `${name}.log`),
      },
      running,
    },
  );
}

async function query<Row extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

type Runner = { channelId: string; pid: number | null; inflight: boolean };

/**
 * Posts `text` to `channelId` through `owner`, whose agent holds the turn (scenario `hold`);
 * stops the database, and ends the turn: its answer is now held in the worker's memory.
 */
async function answerHeldInOutage(
  owner: ServeWorker,
  url: string,
  channelId: string,
  text: string,
) {
  const posted = await owner.api<{ id: string; disposition: string }>(
    "POST",
    `/api/channels/${channelId}/messages`,
    { text },
  );
  expect(posted.disposition).toBe("started");
  await waitFor(
    async () =>
      (
        await query(url, "SELECT 1 FROM events WHERE channel_id = $1 AND event::text LIKE $2", [
          channelId,
          "%holding:%",
        ])
      ).length > 0,
    "the agent to hold its turn",
    30_000,
  );
  const runner = await waitFor(async () => {
    const { runners } = await owner.api<{ runners: Runner[] }>("GET", "/api/runners");
    return runners.find((each) => each.channelId === channelId && each.inflight);
  }, "the turn in flight");
  await cluster.stop();
  // The agent itself: the runner's pid is bubblewrap's when Claude Code runs inside it.
  const fake = [runner.pid!, ...listDescendants(runner.pid!).map((each) => each.pid)].filter(
    (pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("fake-claude");
      } catch {
        return false;
      }
    },
  );
  process.kill(fake.at(-1) ?? runner.pid!, "SIGUSR2");
  // `/api/runners` needs no database: the turn has ended, its answer waits for the store.
  await waitFor(async () => {
    const { runners } = await owner.api<{ runners: Runner[] }>("GET", "/api/runners");
    return runners.find((each) => each.channelId === channelId)?.inflight === false;
  }, "the held turn to end");
  return { id: posted.id, agent: runner.pid! };
}

type Stored = { id: string; kind: string; text: string; state: string | null; reply_to: string };

function channelMessages(url: string, channelId: string): Promise<Stored[]> {
  return query<Stored>(
    url,
    "SELECT id, kind, text, state, reply_to FROM messages WHERE channel_id = $1 ORDER BY created_at, id",
    [channelId],
  );
}

/** Prompts holding `text` that the agents logging to `<name>.log` were given. */
function promptsWith(name: string, text: string): number {
  return fakeLogEntries(join(root, `${name}.log`)).filter(
    (entry) => entry.event === "stdin" && JSON.stringify(entry.message ?? "").includes(text),
  ).length;
}

/** Posts `text` through `next` and waits until every user message of the channel is answered. */
async function postAndSettle(next: ServeWorker, url: string, channelId: string, text: string) {
  await next.api("POST", `/api/channels/${channelId}/messages`, { text });
  return waitFor(
    async () => {
      const messages = await channelMessages(url, channelId);
      const users = messages.filter((message) => message.kind === "user");
      return users.length === 2 && users.every((message) => message.state === "answered")
        ? messages
        : undefined;
    },
    "every message of the channel answered",
    60_000,
  );
}

describe("rudder serve stopped while its database is down", () => {
  it("waits for the database to store the answer it holds, which the next owner does not redo", async () => {
    const url = await cluster.createDatabase("kept");
    const first = await worker("kept-first", url, "hold", ["--shutdown-wait", "60"]);
    const held = await answerHeldInOutage(first, url, "kept", "held question");

    first.run.child.kill("SIGTERM");
    try {
      await waitFor(
        () => first.run.stderr().includes("gateway: stopping while the store is unavailable"),
        "the worker to say it waits",
      );
      // Meanwhile it says it is shutting down, so a load balancer and clients go elsewhere.
      const health = await fetch(`${first.url}/api/health`);
      expect(health.status).toBe(503);
      expect(health.headers.get("retry-after")).toBe("1");
      const answer = (await health.json()) as { worker: string; error: string };
      expect(answer).toMatchObject({
        ok: false,
        store: { ok: false },
        error: `worker ${answer.worker} is shutting down; send again through another worker`,
      });
      const refused = await fetch(`${first.url}/api/channels/kept/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${first.token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "too late" }),
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(await refused.json()).toEqual({ error: answer.error });
    } finally {
      await cluster.start();
    }
    const exit = await first.run.exited;
    expect(exit.code).toBe(0);
    const lines = first.run.stderr().split("\n");
    // One line: it waits, for how long at most, and what it holds (the channel's context too).
    const waiting = lines.filter((line) => line.includes("stopping while the store"));
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatch(
      /^gateway: stopping while the store is unavailable; waiting up to 60 s for it to store what this worker holds: /,
    );
    expect(waiting[0]).toContain(`the answer to message ${held.id}`);
    expect(lines.filter((line) => line.includes("not stored"))).toEqual([]);
    expect(isAlive(held.agent)).toBe(false);

    const stored = await channelMessages(url, "kept");
    expect(stored.map((message) => [message.kind, message.state])).toEqual([
      ["user", "answered"],
      ["reply", null],
    ]);
    expect(stored[1]?.text).toContain("held question");

    // The next owner of the channel finds nothing to redo.
    const next = await worker("kept-next", url, "normal");
    const messages = await postAndSettle(next, url, "kept", "and then");
    expect(messages.filter((message) => message.reply_to === held.id)).toHaveLength(1);
    expect(messages.filter((message) => message.kind === "reply")).toHaveLength(2);
    expect(promptsWith("kept-next", "held question")).toBe(0);
    expect(promptsWith("kept-next", "and then")).toBe(1);
  });

  it("names what it did not store when the wait runs out; the next owner answers it once", async () => {
    const url = await cluster.createDatabase("dropped");
    const first = await worker("dropped-first", url, "hold", ["--shutdown-wait", "1"]);
    const held = await answerHeldInOutage(first, url, "dropped", "lost question");
    first.run.child.kill("SIGTERM");
    let exit: Awaited<RudderRun["exited"]>;
    try {
      exit = await first.run.exited;
    } finally {
      await cluster.start();
    }
    expect(exit.code).toBe(0);
    const lines = first.run.stderr().split("\n");
    const notStored = lines.filter((line) => line.includes("not stored"));
    expect(notStored).toHaveLength(1);
    expect(notStored[0]).toMatch(
      /^gateway: the store did not come back within 1 s; not stored: .*\(their messages stay unanswered, for the next owner of their channels to answer again\)$/,
    );
    expect(notStored[0]).toContain(`the answer to message ${held.id}`);
    expect((await channelMessages(url, "dropped")).map((message) => message.state)).toEqual([
      "received",
    ]);

    const next = await worker("dropped-next", url, "normal");
    const messages = await postAndSettle(next, url, "dropped", "and then");
    expect(messages.filter((message) => message.reply_to === held.id)).toHaveLength(1);
    expect(promptsWith("dropped-next", "lost question")).toBe(1);
  });
});
