/**
 * Three gateway workers (each a process of its own) on one PostgreSQL database, a burst of
 * messages over many channels posted through all of them, and one worker SIGKILLed midway
 * while its turns run. Counts, per message: sent, accepted (202), answered exactly once, lost
 * (accepted, never answered), answered twice, routed late (only by the look for messages a
 * missed wake-up left, see cluster/missed-messages.ts); how long the dead worker's channels
 * waited; and the dead worker's agents (fake Claude CLIs, each turn 0.3 s) still alive at the
 * end.
 */
import { join } from "node:path";
import pg from "pg";
import { type ApiMessage, fakeLogEntries } from "../../test/gateway/helpers.js";
import type { PostgresCluster } from "../../test/helpers/postgres-cluster.js";
import { isAlive } from "../../test/helpers/process-state.js";
import { GatewayProcess } from "../gateway-process.js";
import { type Figure, figure, poll } from "./figures.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "..", "test", "fixtures", "fake-claude");

export interface ClusterBurstOptions {
  root: string;
  /** Where the workers' database is created (a throwaway server of the caller's). */
  postgres: PostgresCluster;
  channels: number;
  /** Messages per channel. */
  perChannel: number;
  workers?: number;
  leaseSeconds?: number;
}

interface Posted {
  id: string;
  text: string;
  channel: string;
}

export async function clusterBurst(options: ClusterBurstOptions): Promise<Figure[]> {
  const workerCount = options.workers ?? 3;
  const leaseSeconds = options.leaseSeconds ?? 2;
  const url = await options.postgres.createDatabase();
  const fakeLog = (index: number) => join(options.root, `burst-fake-${index}.log`);
  const workers = await Promise.all(
    Array.from({ length: workerCount }, (_, index) =>
      GatewayProcess.start({
        dataDir: join(options.root, `burst-${index}`),
        port: 0,
        store: { kind: "postgres", url },
        workerName: `burst-${index}`,
        leaseSeconds,
        maxLive: options.channels,
        engine: {
          claudeBin: FAKE_CLAUDE,
          env: { FAKE_CLAUDE_LOG: fakeLog(index), FAKE_CLAUDE_REPLY_DELAY_MS: "300" },
        },
      }),
    ),
  );
  const victim = 1 % workerCount;
  const live = new Set(workers.keys());
  let sent = 0;
  const accepted: Posted[] = [];
  const post = async (through: number, channel: string, text: string) => {
    sent += 1;
    try {
      const answer = await workers[through]!.api<{ id: string }>(
        "POST",
        `/api/channels/${channel}/messages`,
        { text },
      );
      if (answer.status === 202) accepted.push({ id: answer.body.id, text, channel });
    } catch {
      // That worker was down: the client saw the failure, so nothing was promised.
    }
  };

  let killedAt = 0;
  let inFlight = 0;
  try {
    let counter = 0;
    for (let round = 0; round < options.perChannel; round += 1) {
      if (round === Math.floor(options.perChannel / 2)) {
        // Midway, as the turns of the round just stored run: SIGKILL one worker, nothing handed over.
        await workers[victim]!.kill();
        killedAt = Date.now();
        live.delete(victim);
        inFlight = await unansweredOf(url, `burst-${victim}`);
      }
      const alive = [...live];
      await Promise.all(
        Array.from({ length: options.channels }, (_, channel) => {
          const through = alive[(channel + round) % alive.length]!;
          counter += 1;
          const text = `burst m${String(counter).padStart(5, "0")}.`;
          return post(through, `burst-${channel}`, text);
        }),
      );
      if (round + 1 === Math.floor(options.perChannel / 2)) continue;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const reader = workers[[...live][0]!]!;
    const all = async () => {
      const messages: ApiMessage[] = [];
      for (let channel = 0; channel < options.channels; channel += 1) {
        const { body } = await reader.api<{ messages: ApiMessage[] }>(
          "GET",
          `/api/channels/burst-${channel}/messages`,
        );
        messages.push(...body.messages);
      }
      return messages;
    };
    const ids = new Set(accepted.map((message) => message.id));
    const settled = await poll(async () => {
      const users = (await all()).filter((message) => ids.has(message.id));
      return users.length === ids.size &&
        users.every((message) => message.state === "answered" || message.state === "failed")
        ? true
        : undefined;
    }, 180_000);
    const waitedMs = settled ? Date.now() - killedAt : Number.NaN;
    const messages = await all();
    const replies = messages.filter((message) => message.kind === "reply");
    let once = 0;
    let twice = 0;
    let lost = 0;
    for (const message of accepted) {
      const count = replies.filter((reply) => reply.text.includes(message.text)).length;
      if (count === 1) once += 1;
      else if (count > 1) twice += 1;
      else lost += 1;
    }
    const failed = messages.filter((message) => message.kind === "error").length;
    // What went wrong, for whoever reads a missed goal.
    const byId = new Map(messages.map((message) => [message.id, message]));
    for (const message of accepted) {
      const count = replies.filter((reply) => reply.text.includes(message.text)).length;
      if (count !== 1) {
        process.stderr.write(
          `cluster burst: ${count} replies to ${JSON.stringify(byId.get(message.id))}\n`,
        );
      }
    }
    for (const message of messages.filter((each) => each.kind === "error")) {
      process.stderr.write(`cluster burst: error ${JSON.stringify(message)}\n`);
    }
    const troubled = new Set(
      accepted
        .filter(
          (message) => replies.filter((reply) => reply.text.includes(message.text)).length !== 1,
        )
        .map((message) => message.channel),
    );
    const late = workers.flatMap((worker) =>
      worker.stderrTail.split("\n").filter((line) => line.includes("never routed here")),
    );
    for (const line of late) {
      troubled.add(/ of channel (\S+) /.exec(line)?.[1] ?? "");
    }
    if (troubled.size > 0) await tellTrouble(url, workers, troubled);
    const victimAgents = fakeLogEntries(fakeLog(victim))
      .filter((entry) => entry.event === "start")
      .map((entry) => entry.pid as number);
    const left = await poll(
      () => (victimAgents.every((pid) => !isAlive(pid)) ? 0 : undefined),
      10_000,
    );
    const orphans = left ?? victimAgents.filter((pid) => isAlive(pid)).length;
    const scenario = `${workerCount} workers, 1 SIGKILLed`;
    return [
      figure(scenario, `messages sent over ${options.channels} channels`, sent),
      figure(scenario, "accepted (202)", accepted.length),
      figure(
        scenario,
        "unanswered on the killed worker's channels when killed",
        inFlight,
        "> 0",
        inFlight > 0,
      ),
      figure(scenario, "answered once", once, "= accepted", once === accepted.length),
      figure(scenario, "lost", lost, "0", lost === 0),
      figure(scenario, "answered twice", twice, "0", twice === 0),
      figure(scenario, "failed (error shown)", failed, "0", failed === 0),
      // Each such message was routed only by the look for missed ones: a wake-up went missing.
      figure(scenario, "routed late (a wake-up missed)", late.length, "0", late.length === 0),
      figure(
        scenario,
        `all answered, s after the kill (lease ${leaseSeconds} s)`,
        Number.isNaN(waitedMs) ? "never" : (waitedMs / 1000).toFixed(1),
      ),
      figure(scenario, "agents of the killed worker left alive", orphans, "0", orphans === 0),
    ];
  } finally {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
  }
}

/** User messages not yet answered on the channels `worker` holds leases of. */
async function unansweredOf(url: string, worker: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages m JOIN leases l ON l.channel_id = m.channel_id
       WHERE l.owner = $1 AND m.kind = 'user' AND m.state IN ('received', 'steered')`,
      [worker],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * For whoever reads a missed goal: each troubled channel's lease row, and every worker's log
 * lines that name it (lost leases, take-overs, replays), so the cause is named next time.
 */
async function tellTrouble(
  url: string,
  workers: GatewayProcess[],
  channels: ReadonlySet<string>,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const channel of channels) {
      const { rows } = await client.query(
        "SELECT owner, expires_at, expires_at >= now() AS live FROM leases WHERE channel_id = $1",
        [channel],
      );
      process.stderr.write(`cluster burst: ${channel} lease ${JSON.stringify(rows[0] ?? null)}\n`);
    }
  } finally {
    await client.end();
  }
  workers.forEach((worker, index) => {
    const named = worker.stderrTail
      .split("\n")
      .filter((line) =>
        [...channels].some((channel) => new RegExp(`${channel}(?![\\w-])`).test(line)),
      );
    for (const line of named) process.stderr.write(`cluster burst: burst-${index}: ${line}\n`);
  });
}
