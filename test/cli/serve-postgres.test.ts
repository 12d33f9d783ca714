/**
 * `rudder serve --store postgres://...` against a real PostgreSQL server: state in the database,
 * one token for every worker, and a clear one-line failure when the database is not there.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeLogEntries } from "../gateway/helpers.js";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, startRudder, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startServeWorker } from "./serve-worker.js";

let root: string;
let cluster: PostgresCluster;
const running: RudderRun[] = [];

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: join(root, "home"),
  RUDDER_MAX_RETRIES: "0",
  ...extra,
});

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-pg-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "workspace"));
  cluster = await startPostgresCluster();
});

afterAll(async () => {
  for (const run of running) await stopRudder(run);
  await cluster?.destroy();
  rmSync(root, { recursive: true, force: true });
});

/** A worker on `store` with its own data folder; resolves with its URL once it listens. */
function worker(name: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  return startServeWorker(join(root, name), args, {
    cwd: join(root, "workspace"),
    env: env(extraEnv),
    running,
  });
}

interface Listed {
  messages: Array<{ kind: string; text: string; state: string | null }>;
}

describe("rudder serve --store postgres://", () => {
  it("keeps a channel in the database: answered through one worker, readable through another with the same token", async () => {
    const store = await cluster.createDatabase("shared");
    const first = await worker("first", ["--store", store]);
    const posted = await first.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/main/messages",
      { text: "hello" },
    );
    expect(["started", "one_shot"]).toContain(posted.disposition);
    const answered = await waitFor(
      async () => {
        const { messages } = await first.api<Listed>("GET", "/api/channels/main/messages");
        return messages.some((message) => message.kind === "reply") ? messages : undefined;
      },
      "the reply through the first worker",
      60_000,
    );

    // The second worker finds the database through RUDDER_STORE.
    const second = await worker("second", [], { RUDDER_STORE: store });
    expect(second.token).toBe(first.token);
    expect(statSync(join(second.dataDir, "token")).mode & 0o777).toBe(0o600);
    const seen = (await second.api<Listed>("GET", "/api/channels/main/messages")).messages;
    // The demo agent may add a message of its own later (its background task); the start agrees.
    expect(seen.slice(0, 2).map((message) => [message.kind, message.text])).toEqual(
      answered.slice(0, 2).map((message) => [message.kind, message.text]),
    );
    expect(seen[0]).toMatchObject({ kind: "user", text: "hello", state: "answered" });
    const channels = await second.api<{ channels: Array<{ id: string }> }>("GET", "/api/channels");
    expect(channels.channels.map((channel) => channel.id)).toEqual(["main"]);
  });

  it("exits 1 with one line naming the unreachable database, its password hidden", async () => {
    const url = `postgres://rudder:hunter2@127.0.0.1:${cluster.port + 1}/nowhere`;
    const run = startRudder(
      ["serve", "--port", "0", "--data", join(root, "down"), "--store", url],
      {
        cwd: join(root, "workspace"),
        env: env(),
      },
    );
    const { code } = await run.exited;
    expect(code).toBe(1);
    const lines = run.stderr().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      `rudder serve: cannot use the database postgres://rudder:***@127.0.0.1:${cluster.port + 1}/nowhere`,
    );
    expect(run.stderr()).not.toContain("hunter2");
  });

  it("refuses a --store that is not a PostgreSQL URL", async () => {
    const run = startRudder(["serve", "--data", join(root, "bad"), "--store", "mysql://x"], {
      cwd: join(root, "workspace"),
      env: env(),
    });
    const { code } = await run.exited;
    expect(code).toBe(2);
    expect(run.stderr()).toContain("--store must be a postgres:// URL");
  });

  it("moves a channel whose worker is killed mid-turn to another, answered once, resuming its session", async () => {
    const store = await cluster.createDatabase("failover");
    const engine = (name: string, scenario: string) => {
      writeFileSync(join(root, `${name}.scenario`), scenario);
      return {
        RUDDER_CLAUDE_BIN: FAKE_CLAUDE_SWITCH,
        GATEWAY_TEST_SCENARIO_FILE: join(root, `${name}.scenario`),
        FAKE_CLAUDE_LOG: join(root, `${name}.log`),
      };
    };
    const flags = ["--store", store, "--engine", "claude", "--lease-seconds", "2"];
    const doomed = await worker("doomed", flags, engine("doomed", "hold"));
    const survivor = await worker("survivor", flags, engine("survivor", "normal"));
    const posted = await doomed.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/moving/messages",
      { text: "survive this" },
    );
    expect(posted.disposition).toBe("started");
    const [agent] = await waitFor(() => {
      const starts = fakeLogEntries(join(root, "doomed.log")).filter(
        (entry) => entry.event === "start",
      );
      return starts.length > 0 ? starts : undefined;
    }, "the doomed worker's agent");
    const sessionId = await waitFor(async () => {
      const { channels } = await doomed.api<{ channels: Array<{ sessionId: string | null }> }>(
        "GET",
        "/api/channels",
      );
      return channels[0]?.sessionId ?? undefined;
    }, "the channel's session id");

    // kill -9 of the worker and of its agent (a SIGKILLed gateway cannot stop its children).
    const killedAt = Date.now();
    doomed.run.kill();
    process.kill(Number(agent?.pid), "SIGKILL");
    await doomed.run.exited;
    // Dead: gone, or a zombie (this container's PID 1 reaps no orphans).
    await waitFor(() => {
      if (!isAlive(Number(agent?.pid))) return true;
      const stat = readFileSync(`/proc/${Number(agent?.pid)}/stat`, "utf8");
      return stat.split(") ")[1]?.startsWith("Z") === true;
    }, "the killed agent to be dead");

    const reply = await waitFor(
      async () => {
        const { messages } = await survivor.api<{
          messages: Array<{ kind: string; text: string; replyTo: string | null }>;
        }>("GET", "/api/channels/moving/messages");
        return messages.find((message) => message.replyTo === posted.id);
      },
      "the survivor's answer",
      60_000,
    );
    const failoverMs = Date.now() - killedAt;
    expect(reply.kind).toBe("reply");
    expect(reply.text).toContain("survive this");
    const { messages } = await survivor.api<{ messages: Array<{ kind: string; state: string }> }>(
      "GET",
      "/api/channels/moving/messages",
    );
    expect(messages.map((message) => message.kind)).toEqual(["user", "reply"]);
    expect(messages[0]?.state).toBe("answered");
    // The survivor's agent resumed the conversation the dead worker's agent had begun.
    const resumed = fakeLogEntries(join(root, "survivor.log")).filter(
      (entry) => entry.event === "start",
    );
    expect(resumed).toHaveLength(1);
    expect(resumed[0]?.args).toEqual(expect.arrayContaining(["--resume", sessionId]));
    // Within a lease period and a renewal (2 s + 0.7 s), plus the load of a shared machine.
    expect(failoverMs).toBeLessThan(30_000);
  });
});
