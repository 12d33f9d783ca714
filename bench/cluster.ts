// Gateway workers on PostgreSQL against one on SQLite, in one run, with the fake Claude CLI as
// every agent and a throwaway PostgreSQL server (test/fixtures/postgres-cluster.ts):
//   1. one worker on SQLite: 8 warm channels, messages posted back to back on each;
//   2. the same through one worker on PostgreSQL;
//   3. two workers on PostgreSQL, each message posted through the worker that does not drive
//      its channel (stored there, the owner woken by NOTIFY), read on the owner's SSE;
//   4. take-over: a channel whose owner stopped renewing (a dead worker's), answered by the
//      other worker; the time from the lease's expiry to the answer, against the lease period.
// Prints msg/s and p50/p99 latency of each, and the ratios.
// Run: node --import tsx bench/cluster.ts   (BENCH_MESSAGES per channel, default 30)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { type GatewayOptions, type RunningGateway, startGateway } from "../src/gateway/index.js";
import { startPostgresCluster } from "../test/fixtures/postgres-cluster.js";
import { ChannelStream, percentile, report } from "./gateway.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "test", "fixtures", "fake-claude");
const CHANNELS = 8;
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 30);
const LEASE_SECONDS = 2;

const folders: string[] = [];
async function worker(options: Partial<GatewayOptions> = {}): Promise<RunningGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "rudder-bench-cluster-"));
  folders.push(dataDir);
  return startGateway({
    dataDir,
    port: 0,
    maxLive: CHANNELS,
    engine: { claudeBin: FAKE_CLAUDE, env: { FAKE_CLAUDE_SCENARIO: "normal" } },
    ...options,
  });
}

type Result = { latencies: number[]; seconds: number };

/**
 * Warm channels on `owner` (each its first message through it, so it claims them), then
 * `MESSAGES` back to back on each, posted through `via`.
 */
async function warmRun(prefix: string, owner: RunningGateway, via = owner): Promise<Result> {
  const streams = Array.from(
    { length: CHANNELS },
    (_, index) => new ChannelStream(owner, `${prefix}-${index}`),
  );
  await Promise.all(streams.map((stream) => stream.open()));
  await Promise.all(streams.map((stream) => stream.send("spawn")));
  const started = performance.now();
  const perChannel = await Promise.all(
    streams.map(async (stream) => {
      const latencies: number[] = [];
      for (let index = 0; index < MESSAGES; index += 1)
        latencies.push(await stream.send(`warm ${index}`, via));
      return latencies;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(streams.map((stream) => stream.close()));
  return { latencies: perChannel.flat(), seconds };
}

/** Milliseconds from a dead owner's lease expiring to the other worker's answer. */
async function takeOver(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const expiresAt = new Date(Date.now() + 500);
    await client.query(
      "INSERT INTO channels (id, created_at, last_activity_at) VALUES ('orphan', now(), now())",
    );
    await client.query(
      `INSERT INTO messages (id, channel_id, role, kind, text, state, source, created_at, updated_at)
       VALUES ('orphaned', 'orphan', 'user', 'user', 'still there?', 'received', 'http', now(), now())`,
    );
    await client.query(
      "INSERT INTO leases (channel_id, owner, expires_at) VALUES ('orphan', 'dead-worker', $1)",
      [expiresAt],
    );
    for (;;) {
      const { rows } = await client.query(
        "SELECT created_at FROM messages WHERE reply_to = 'orphaned'",
      );
      if (rows[0]) return (rows[0].created_at as Date).getTime() - expiresAt.getTime();
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (Date.now() - expiresAt.getTime() > 60_000) throw new Error("no take-over within 60 s");
    }
  } finally {
    await client.end();
  }
}

export async function main(): Promise<void> {
  const cluster = await startPostgresCluster();
  const gateways: RunningGateway[] = [];
  try {
    process.stdout.write(
      `cluster bench: fake Claude CLI, ${CHANNELS} warm channels x ${MESSAGES} messages\n`,
    );
    const sqlite = await worker();
    gateways.push(sqlite);
    const onSqlite = await warmRun("sqlite", sqlite);
    report("1 worker, SQLite", onSqlite);

    const single = await cluster.createDatabase("single");
    const postgres = await worker({ store: { kind: "postgres", url: single } });
    gateways.push(postgres);
    const onPostgres = await warmRun("postgres", postgres);
    report("1 worker, PostgreSQL", onPostgres);

    const shared = await cluster.createDatabase("shared");
    const workerOptions = { store: { kind: "postgres" as const, url: shared } };
    const owner = await worker({ ...workerOptions, leaseSeconds: LEASE_SECONDS });
    const other = await worker({ ...workerOptions, leaseSeconds: LEASE_SECONDS });
    gateways.push(owner, other);
    const forwarded = await warmRun("forwarded", owner, other);
    report("2 workers, through the non-owner", forwarded);
    const takeOverMs = await takeOver(shared);
    process.stdout.write(
      `take-over of a dead worker's channel  ${takeOverMs.toFixed(0)} ms after its lease expired ` +
        `(lease ${LEASE_SECONDS} s, renewed every ${((LEASE_SECONDS * 1000) / 3).toFixed(0)} ms)\n`,
    );

    const p50 = (result: Result) => percentile(result.latencies, 0.5);
    const rate = (result: Result) => result.latencies.length / result.seconds;
    process.stdout.write(
      `ratio: PostgreSQL/SQLite p50 ${(p50(onPostgres) / p50(onSqlite)).toFixed(2)}x, ` +
        `msg/s ${(rate(onPostgres) / rate(onSqlite)).toFixed(2)}x; ` +
        `forwarded/direct p50 ${(p50(forwarded) / p50(onPostgres)).toFixed(2)}x; ` +
        `failover ${((LEASE_SECONDS * 1000 + takeOverMs) / (LEASE_SECONDS * 1000)).toFixed(2)} lease periods after the last renewal\n`,
    );
  } finally {
    await Promise.allSettled(gateways.map((gateway) => gateway.close()));
    await cluster.destroy();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}

await main();
