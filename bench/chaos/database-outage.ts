/**
 * Gateway workers (each a process of its own) on one PostgreSQL server that is stopped and
 * started again several times while a steady load of messages arrives over many channels, once
 * for longer than a lease. Each message is a client of its own: it posts through one worker
 * (round robin), and on a `503` waits the `Retry-After` it was given and posts again, until it
 * is accepted. Counts, per message: accepted (202), answered exactly once, lost, answered twice,
 * stored twice (a retry after a `503` whose first try was kept after all); the `503`s and how
 * many carried `Retry-After`; the workers that did not live through it; and the agents (fake
 * Claude CLIs, each turn 0.3 s) still alive once the workers are stopped.
 */
import { join } from "node:path";
import pg from "pg";
import { type ApiMessage, fakeLogEntries } from "../../test/gateway/helpers.js";
import type { PostgresCluster } from "../../test/helpers/postgres-cluster.js";
import { isAlive } from "../../test/helpers/process-state.js";
import { GatewayProcess } from "../gateway-process.js";
import { type Figure, figure, poll } from "./figures.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "..", "test", "fixtures", "fake-claude");

export interface DatabaseOutageOptions {
  root: string;
  /** The workers' server, stopped and started by the scenario (a throwaway one of the caller's). */
  postgres: PostgresCluster;
  channels: number;
  /** How long each outage lasts, in order; one should pass the lease. */
  outagesMs: number[];
  /** The database up between outages, and before the first. */
  upMs?: number;
  /** One new message every so often, for as long as the outages run. */
  everyMs?: number;
  workers?: number;
  leaseSeconds?: number;
}

interface Client {
  text: string;
  channel: string;
  /** The accepted message's id. */
  id?: string;
  unavailable: number;
  withRetryAfter: number;
  /** Anything but 202 and 503 (a status, or no answer at all). */
  other: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function databaseOutage(options: DatabaseOutageOptions): Promise<Figure[]> {
  const workerCount = options.workers ?? 3;
  const leaseSeconds = options.leaseSeconds ?? 2;
  const upMs = options.upMs ?? 4000;
  const everyMs = options.everyMs ?? 50;
  const url = await options.postgres.createDatabase();
  const fakeLog = (index: number) => join(options.root, `outage-fake-${index}.log`);
  const workers = await Promise.all(
    Array.from({ length: workerCount }, (_, index) =>
      GatewayProcess.start({
        dataDir: join(options.root, `outage-${index}`),
        port: 0,
        store: { kind: "postgres", url },
        workerName: `outage-${index}`,
        leaseSeconds,
        maxLive: options.channels,
        engine: {
          claudeBin: FAKE_CLAUDE,
          env: { FAKE_CLAUDE_LOG: fakeLog(index), FAKE_CLAUDE_REPLY_DELAY_MS: "300" },
        },
      }),
    ),
  );
  // The one line each worker logs when it loses the database, and when it is back.
  const logged = workers.map((worker) => {
    const counts = { lost: 0, back: 0 };
    let partial = "";
    worker.child.stderr?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.includes("gateway: store unavailable")) counts.lost += 1;
        if (line.includes("gateway: store back")) counts.back += 1;
      }
    });
    return counts;
  });

  const clients: Client[] = [];
  const send = async (client: Client, through: number, deadline: number): Promise<void> => {
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      const worker = workers[(through + attempt) % workers.length]!;
      try {
        const response = await fetch(`${worker.url}/api/channels/${client.channel}/messages`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${worker.token}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({ text: client.text }),
          signal: AbortSignal.timeout(30_000),
        });
        const body = (await response.json()) as { id?: string };
        if (response.status === 202 && body.id) {
          client.id = body.id;
          return;
        }
        if (response.status !== 503) {
          client.other.push(String(response.status));
          return;
        }
        client.unavailable += 1;
        const retryAfter = Number(response.headers.get("retry-after"));
        if (Number.isInteger(retryAfter) && retryAfter > 0) client.withRetryAfter += 1;
        await sleep(Math.max(1, retryAfter || 1) * 1000);
      } catch (error) {
        client.other.push(String(error).slice(0, 60));
        return;
      }
    }
  };

  const running: Promise<void>[] = [];
  let loading = true;
  const load = (async () => {
    for (let index = 0; loading; index += 1) {
      const client: Client = {
        text: `outage m${String(index).padStart(5, "0")}.`,
        channel: `outage-${index % options.channels}`,
        unavailable: 0,
        withRetryAfter: 0,
        other: [],
      };
      clients.push(client);
      running.push(send(client, index % workers.length, Date.now() + 120_000));
      await sleep(everyMs);
    }
  })();

  let inFlight = 0;
  let crashed = 0;
  let leftAlive = Number.NaN;
  try {
    await sleep(upMs);
    for (const outageMs of options.outagesMs) {
      // Turns on these run into the outage: their answers wait in memory for the database.
      inFlight += await unanswered(url);
      await options.postgres.stop();
      await sleep(outageMs);
      await options.postgres.start();
      await sleep(upMs);
    }
    loading = false;
    await load;
    await Promise.all(running);

    const reader = workers[0]!;
    const all = async () => {
      const messages: ApiMessage[] = [];
      for (let channel = 0; channel < options.channels; channel += 1) {
        const { status, body } = await reader.api<{ messages: ApiMessage[] }>(
          "GET",
          `/api/channels/outage-${channel}/messages`,
        );
        if (status !== 200) return undefined;
        messages.push(...body.messages);
      }
      return messages;
    };
    const accepted = clients.filter((client) => client.id !== undefined);
    const ids = new Set(accepted.map((client) => client.id));
    await poll(async () => {
      const users = (await all())?.filter((message) => ids.has(message.id));
      return users?.length === ids.size &&
        users.every((message) => message.state === "answered" || message.state === "failed")
        ? true
        : undefined;
    }, 180_000);
    const messages = (await all()) ?? [];
    const replies = messages.filter((message) => message.kind === "reply");
    const users = messages.filter((message) => message.kind === "user");
    let once = 0;
    let twice = 0;
    let lost = 0;
    let storedTwice = 0;
    for (const client of accepted) {
      const count = replies.filter((reply) => reply.text.includes(client.text)).length;
      if (count === 1) once += 1;
      else if (count > 1) twice += 1;
      else lost += 1;
      if (users.filter((user) => user.text === client.text).length > 1) storedTwice += 1;
      if (count !== 1) {
        const stored = messages.find((message) => message.id === client.id);
        process.stderr.write(`database outage: ${count} replies to ${JSON.stringify(stored)}\n`);
      }
    }
    const failed = messages.filter((message) => message.kind === "error").length;
    for (const message of messages.filter((each) => each.kind === "error")) {
      process.stderr.write(`database outage: error ${JSON.stringify(message)}\n`);
    }
    const refused = clients.filter((client) => client.unavailable > 0);
    const unavailable = clients.reduce((sum, client) => sum + client.unavailable, 0);
    const withRetryAfter = clients.reduce((sum, client) => sum + client.withRetryAfter, 0);
    const retried = refused.filter((client) => client.id !== undefined).length;
    const other = clients.flatMap((client) => client.other);
    for (const answer of new Set(other)) {
      process.stderr.write(`database outage: a client got ${answer}\n`);
    }

    crashed = workers.filter(
      (worker) => worker.child.exitCode !== null || worker.child.signalCode !== null,
    ).length;
    await Promise.all(workers.map((worker) => worker.stop()));
    // A worker that needed its SIGKILL to stop did not close cleanly.
    crashed += workers.filter((worker) => worker.child.exitCode !== 0).length;
    const agents = workers.flatMap((_, index) =>
      fakeLogEntries(fakeLog(index))
        .filter((entry) => entry.event === "start")
        .map((entry) => entry.pid as number),
    );
    leftAlive =
      (await poll(() => (agents.every((pid) => !isAlive(pid)) ? 0 : undefined), 10_000)) ??
      agents.filter((pid) => isAlive(pid)).length;

    const outages = options.outagesMs.length;
    const longest = Math.max(...options.outagesMs) / 1000;
    const scenario = `${workerCount} workers, database down ${outages}x`;
    return [
      figure(scenario, `messages sent over ${options.channels} channels`, clients.length),
      figure(
        scenario,
        `outages (s; lease ${leaseSeconds} s)`,
        options.outagesMs.map((ms) => ms / 1000).join(", "),
      ),
      figure(
        scenario,
        "unanswered when the database stopped (all outages)",
        inFlight,
        "> 0",
        inFlight > 0,
      ),
      figure(
        scenario,
        "accepted (202)",
        accepted.length,
        "= sent",
        accepted.length === clients.length,
      ),
      figure(scenario, "answered once", once, "= accepted", once === accepted.length),
      figure(scenario, "lost", lost, "0", lost === 0),
      figure(scenario, "answered twice", twice, "0", twice === 0),
      figure(scenario, "stored twice (a retry of one kept)", storedTwice, "0", storedTwice === 0),
      figure(scenario, "failed (error shown)", failed, "0", failed === 0),
      figure(
        scenario,
        "messages refused with 503 at first",
        refused.length,
        "> 0",
        refused.length > 0,
      ),
      figure(
        scenario,
        "503 answers with Retry-After",
        `${withRetryAfter} of ${unavailable}`,
        "all",
        withRetryAfter === unavailable,
      ),
      figure(
        scenario,
        "refused, then accepted on retry",
        retried,
        "= refused",
        retried === refused.length,
      ),
      figure(scenario, "other answers (not 202 or 503)", other.length, "0", other.length === 0),
      figure(
        scenario,
        `longest outage (${longest} s) over the lease`,
        longest > leaseSeconds ? "yes" : "no",
        "yes",
        longest > leaseSeconds,
      ),
      figure(
        scenario,
        "outages each worker logged (lost / back)",
        logged.map((counts) => `${counts.lost}/${counts.back}`).join(", "),
        `${outages}/${outages} each`,
        logged.every((counts) => counts.lost === outages && counts.back === outages),
      ),
      figure(scenario, "workers crashed or killed to stop", crashed, "0", crashed === 0),
      figure(
        scenario,
        "agents left alive after the workers stopped",
        leftAlive,
        "0",
        leftAlive === 0,
      ),
    ];
  } finally {
    loading = false;
    await Promise.allSettled(workers.map((worker) => worker.stop()));
  }
}

/** User messages not yet answered. */
async function unanswered(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE kind = 'user' AND state IN ('received', 'steered')",
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}
