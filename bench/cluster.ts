// Gateway workers under load, in one run, each worker a process of its own (bench/gateway-process.ts)
// with the fake Claude CLI as every agent, and a throwaway PostgreSQL (test/helpers/postgres-cluster.ts):
//   1. one worker on SQLite, 2. one worker on PostgreSQL, 3. three workers on one PostgreSQL:
//      `CHANNELS` warm channels, each sent `MESSAGES` messages one after the other (the next once
//      the reply to the last is on the channel's event stream). Through three workers each
//      message goes through the next worker in turn (two in three through one that does not own
//      the channel: stored there, the owner woken by NOTIFY), and its reply is awaited on the
//      owner's event stream and on another worker's (the SSE fan-out across workers).
//   4. failover: the owner of a channel killed with SIGKILL, a message sent through another
//      worker; the time from the kill to its reply, in lease periods.
// Latency is from the POST to the `reply` event on the SSE stream (the answer stored and
// published). The fake agent answers at once (the runner alone adds ~0.14 ms a turn,
// bench/runner.ts), so this latency is what the gateway and the HTTP path add.
// The processor time each part spent per message says where the time goes on a small machine:
// the gateway worker(s), the agents, and this load generator (HTTP/1.1 on keep-alive sockets,
// bench/load-client.ts).
// Run: node --import tsx bench/cluster.ts
// Before the measured messages each channel is sent `WARMUP` unmeasured ones, the same way, so
// the figures are of a worker running steadily (its code compiled by V8, its pools and caches
// filled), not of its first seconds. After 100 a channel, V8 still spent a quarter of the
// worker's processor time optimizing (`--trace-opt`: 2 s of TurboFan in a 7 s run; `perf`:
// 14% in the measured part); after 400 it is down to 3%, and 800 measure the same as 400.
//   BENCH_CHANNELS (default 8), BENCH_MESSAGES per channel (default 400), BENCH_WARMUP per
//   channel (default 400),
//   BENCH_PROFILE=<folder>: the workers write V8 CPU profiles there (`node --cpu-prof`),
//   BENCH_ONLY=sqlite|postgres|three: that part alone (three includes the failover),
//   BENCH_NODE_FLAGS: more flags for the workers' node (`--perf-basic-prof` for `perf record`,
//   `--trace-opt` with BENCH_GATEWAY_STDOUT=<file>, where the workers' stdout is kept),
//   BENCH_PG_STATEMENTS=1: after the one-worker PostgreSQL run, its statements per message and
//   the server's time in each (`pg_stat_statements`),
//   BENCH_PG_SETTINGS='{"name":"value"}': more settings for the throwaway PostgreSQL server.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { startPostgresCluster } from "../test/helpers/postgres-cluster.js";
import { percentile } from "./gateway.js";
import { type GatewayChildOptions, GatewayProcess } from "./gateway-process.js";
import { Connections, cpuMs, descendantsNamed, postJson, ReplyStream } from "./load-client.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "test", "fixtures", "fake-claude");
const CHANNELS = Number(process.env.BENCH_CHANNELS ?? 8);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 400);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 400);
const LEASE_SECONDS = 2;
const GOAL_RATE = 1000;
const GOAL_P99_MS = 20;
const GOAL_FAILOVER_PERIODS = 1.5;
const ONLY = process.env.BENCH_ONLY;
const part = (name: string) => ONLY === undefined || ONLY === name;

const folders: string[] = [];
const workers: GatewayProcess[] = [];

async function worker(options: Partial<GatewayChildOptions> = {}): Promise<GatewayProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "rudder-bench-cluster-"));
  folders.push(dataDir);
  const profile = process.env.BENCH_PROFILE;
  const gateway = await GatewayProcess.start(
    {
      dataDir,
      port: 0,
      maxLive: CHANNELS,
      engine: {
        claudeBin: FAKE_CLAUDE,
        // Each turn's lines in one write: an agent answering at once, for the least it can cost.
        env: { FAKE_CLAUDE_SCENARIO: "normal", FAKE_CLAUDE_WRITES: "turn" },
      },
      ...options,
    },
    process.env,
    [
      ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
      ...(process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []),
    ],
  );
  workers.push(gateway);
  return gateway;
}

interface Channel {
  id: string;
  owner: GatewayProcess;
  stream: ReplyStream;
  /** The same channel's events on another worker, when there are several. */
  elsewhere: ReplyStream | undefined;
}

interface Run {
  workers: number;
  latencies: number[];
  /** Reply on another worker's stream minus reply on the owner's, per message. */
  fanOut: number[];
  seconds: number;
  gatewayCpuMs: number;
  agentCpuMs: number;
  /** The PostgreSQL server's processes (0 on SQLite, whose work is inside the gateway). */
  databaseCpuMs: number;
  clientCpuMs: number;
  load: number;
}

async function agentPids(gateway: GatewayProcess): Promise<number[]> {
  const { body } = await gateway.api<{ runners: Array<{ pid: number | null }> }>(
    "GET",
    "/api/runners",
  );
  return body.runners.flatMap((runner) => (runner.pid ? [runner.pid] : []));
}

async function cpuOf(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) total += await cpuMs(pid);
  return total;
}

async function send(
  gateway: GatewayProcess,
  agent: Connections,
  channelId: string,
  text: string,
): Promise<string> {
  const { status, body } = await postJson(
    gateway,
    `/api/channels/${channelId}/messages`,
    { text },
    agent,
  );
  if (status !== 202) throw new Error(`POST answered ${status}: ${JSON.stringify(body)}`);
  return (body as { id: string }).id;
}

/** Opens each channel's streams and warms it through its owner (which so takes its lease). */
async function warm(
  prefix: string,
  via: GatewayProcess[],
  agents: Map<GatewayProcess, Connections>,
) {
  const channels: Channel[] = [];
  for (let index = 0; index < CHANNELS; index += 1) {
    const owner = via[index % via.length]!;
    const other = via.length > 1 ? via[(index + 1) % via.length]! : undefined;
    const id = `${prefix}-${index}`;
    const channel: Channel = {
      id,
      owner,
      stream: new ReplyStream(owner, id),
      elsewhere: other ? new ReplyStream(other, id) : undefined,
    };
    await channel.stream.open();
    await channel.elsewhere?.open();
    channels.push(channel);
  }
  await Promise.all(
    channels.map(async (channel) => {
      const id = await send(channel.owner, agents.get(channel.owner)!, channel.id, "spawn");
      await channel.stream.reply(id);
      await channel.elsewhere?.reply(id);
    }),
  );
  return channels;
}

/**
 * Each channel sent `count` messages one after the other, through the workers in turn: each
 * message's latency to its reply on the owner's stream, and how much later it was on another's.
 */
async function exchange(
  channels: Channel[],
  via: GatewayProcess[],
  agents: Map<GatewayProcess, Connections>,
  count: number,
): Promise<{ latencies: number[]; fanOut: number[] }> {
  const latencies: number[] = [];
  const fanOut: number[] = [];
  await Promise.all(
    channels.map(async (channel, index) => {
      for (let sent = 0; sent < count; sent += 1) {
        const through = via[(index + sent) % via.length]!;
        const postedAt = performance.now();
        const id = await send(through, agents.get(through)!, channel.id, `message ${sent}`);
        const answeredAt = await channel.stream.reply(id);
        latencies.push(answeredAt - postedAt);
        if (channel.elsewhere) fanOut.push((await channel.elsewhere.reply(id)) - answeredAt);
      }
    }),
  );
  return { latencies, fanOut };
}

/** `afterWarmup` runs between the unmeasured messages and the measured ones. */
async function throughput(
  prefix: string,
  via: GatewayProcess[],
  afterWarmup?: () => Promise<void>,
): Promise<Run> {
  const agents = new Map(via.map((gateway) => [gateway, new Connections()]));
  const channels = await warm(prefix, via, agents);
  await exchange(channels, via, agents, WARMUP);
  await afterWarmup?.();
  const agentsOf = (await Promise.all(via.map(agentPids))).flat();
  const gatewayPids = via.map((gateway) => gateway.pid);
  const gatewayBefore = await cpuOf(gatewayPids);
  const agentBefore = await cpuOf(agentsOf);
  // The server's processes at the end are counted whole if they started meanwhile (a pool
  // opening a connection); one that ended meanwhile is missed.
  const databaseBefore = await cpuOf(await descendantsNamed(process.pid, "postgres"));
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const { latencies, fanOut } = await exchange(channels, via, agents, MESSAGES);
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const run: Run = {
    workers: via.length,
    latencies,
    fanOut,
    seconds,
    gatewayCpuMs: (await cpuOf(gatewayPids)) - gatewayBefore,
    agentCpuMs: (await cpuOf(agentsOf)) - agentBefore,
    databaseCpuMs: (await cpuOf(await descendantsNamed(process.pid, "postgres"))) - databaseBefore,
    clientCpuMs: (client.user + client.system) / 1000,
    load: loadavg()[0] ?? 0,
  };
  for (const channel of channels) {
    channel.stream.close();
    channel.elsewhere?.close();
  }
  for (const agent of agents.values()) agent.destroy();
  return run;
}

const fixed = (value: number, digits = 1) => value.toFixed(digits);

function report(label: string, run: Run): void {
  const count = run.latencies.length;
  const rate = count / run.seconds;
  const p50 = percentile(run.latencies, 0.5);
  const p99 = percentile(run.latencies, 0.99);
  /** Processor time per message of the worker(s), against a core's time per message at the goal. */
  const gateway = run.gatewayCpuMs / count;
  const budget = 1000 / GOAL_RATE;
  process.stdout.write(
    `${label.padEnd(26)} ${fixed(rate).padStart(7)} msg/s (${fixed(rate / GOAL_RATE, 2)}x of ${GOAL_RATE})  ` +
      `p50 ${fixed(p50)} ms  p99 ${fixed(p99)} ms (${fixed(p99 / GOAL_P99_MS, 2)}x of ${GOAL_P99_MS})  ` +
      `load ${fixed(run.load, 2)}\n` +
      `${"".padEnd(26)} processor ms per message: ${run.workers > 1 ? `${run.workers} workers` : "gateway"} ${fixed(gateway, 2)} ` +
      `(${fixed(gateway / budget, 2)}x of the ${fixed(budget, 2)} ms a message has at ${GOAL_RATE} msg/s), ` +
      `agents ${fixed(run.agentCpuMs / count, 2)}, PostgreSQL ${fixed(run.databaseCpuMs / count, 2)}, ` +
      `load generator ${fixed(run.clientCpuMs / count, 2)}; at that processor time, with a core per worker, ` +
      `at most ${fixed((1000 * run.workers) / gateway, 0)} msg/s\n`,
  );
  if (run.fanOut.length > 0) {
    process.stdout.write(
      `${"".padEnd(26)} SSE on another worker: reply p50 ${fixed(percentile(run.fanOut, 0.5))} ms, ` +
        `p99 ${fixed(percentile(run.fanOut, 0.99))} ms after the owner's stream ` +
        `(${fixed(percentile(run.fanOut, 0.99) / GOAL_P99_MS, 2)}x of ${GOAL_P99_MS})\n`,
    );
  }
}

/** SIGKILLs the owner of a channel, sends it a message through another worker: ms to the reply. */
async function failover(owner: GatewayProcess, other: GatewayProcess): Promise<number> {
  const agent = new Connections();
  const channelId = "failover";
  const stream = new ReplyStream(other, channelId);
  await stream.open();
  try {
    await stream.reply(await send(owner, agent, channelId, "spawn"));
    const killedAt = performance.now();
    await owner.kill();
    const id = await send(other, agent, channelId, "still there?");
    return (await stream.reply(id, 60_000)) - killedAt;
  } finally {
    stream.close();
    agent.destroy();
  }
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

async function resetStatements(url: string): Promise<void> {
  await withClient(url, async (client) => {
    await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await client.query("SELECT pg_stat_statements_reset()");
    await client.query("SELECT pg_stat_reset(), pg_stat_reset_shared('wal')");
  });
}

/**
 * The statements the measured messages sent, the most time first: calls and server ms per
 * message; then the rows written and the WAL per message.
 */
async function reportStatements(url: string, messages: number): Promise<void> {
  const { rows } = await withClient(url, (client) =>
    client.query<{ calls: string; total: number; query: string }>(
      `SELECT calls, total_exec_time AS total, query FROM pg_stat_statements
       WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 15`,
    ),
  );
  for (const row of rows) {
    const text = row.query.replace(/\s+/g, " ").slice(0, 110);
    process.stdout.write(
      `${"".padEnd(26)} ${fixed(Number(row.calls) / messages, 2).padStart(5)} calls ` +
        `${fixed(row.total / messages, 3).padStart(6)} ms per message  ${text}\n`,
    );
  }
  const { tables, wal } = await withClient(url, async (client) => {
    // Table counts reach the views when a backend flushes them (at most once a second).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const tables = await client.query<{ relname: string; ins: string; upd: string; hot: string }>(
      `SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot
       FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd > 0 ORDER BY relname`,
    );
    const wal = await client.query<{ records: string; bytes: string }>(
      "SELECT wal_records AS records, wal_bytes AS bytes FROM pg_stat_wal",
    );
    return { tables: tables.rows, wal: wal.rows[0] };
  });
  for (const table of tables) {
    const per = (count: string) => fixed(Number(count) / messages, 2);
    process.stdout.write(
      `${"".padEnd(26)} ${table.relname}: ${per(table.ins)} rows inserted, ${per(table.upd)} ` +
        `updated (${per(table.hot)} heap-only) per message\n`,
    );
  }
  if (wal) {
    process.stdout.write(
      `${"".padEnd(26)} WAL: ${fixed(Number(wal.records) / messages, 1)} records, ` +
        `${fixed(Number(wal.bytes) / messages, 0)} bytes per message\n`,
    );
  }
}

export async function main(): Promise<void> {
  const statements = process.env.BENCH_PG_STATEMENTS === "1";
  const cluster = await startPostgresCluster({
    ...(statements ? { shared_preload_libraries: "pg_stat_statements" } : {}),
    ...(process.env.BENCH_PG_SETTINGS ? JSON.parse(process.env.BENCH_PG_SETTINGS) : {}),
  });
  try {
    process.stdout.write(
      `cluster bench: fake Claude CLI, ${CHANNELS} warm channels x ${MESSAGES} messages each ` +
        `(after ${WARMUP} each unmeasured), ` +
        `one in flight per channel; latency = POST to the reply on SSE\n`,
    );
    if (part("sqlite")) {
      report("1 worker, SQLite", await throughput("sqlite", [await worker()]));
    }
    if (part("postgres")) {
      const single = await cluster.createDatabase("single");
      const postgres = await worker({ store: { kind: "postgres", url: single } });
      // Counted from the measured messages on.
      const run = await throughput(
        "postgres",
        [postgres],
        statements ? () => resetStatements(single) : undefined,
      );
      report("1 worker, PostgreSQL", run);
      if (statements) await reportStatements(single, run.latencies.length);
    }
    if (!part("three")) return;
    const shared = await cluster.createDatabase("shared");
    const options = { store: { kind: "postgres" as const, url: shared }, leaseSeconds: 2 };
    const three = [await worker(options), await worker(options), await worker(options)];
    report("3 workers, PostgreSQL", await throughput("three", three));

    const ms = await failover(three[0]!, three[1]!);
    const periods = ms / (LEASE_SECONDS * 1000);
    process.stdout.write(
      `failover after SIGKILL      ${fixed(ms, 0)} ms from the kill to the reply = ${fixed(periods, 2)} lease periods ` +
        `(${fixed(periods / GOAL_FAILOVER_PERIODS, 2)}x of the ${GOAL_FAILOVER_PERIODS} goal; lease ${LEASE_SECONDS} s)  ` +
        `load ${fixed(loadavg()[0] ?? 0, 2)}\n`,
    );
  } finally {
    await Promise.allSettled(workers.map((gateway) => gateway.stop()));
    await cluster.destroy();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}

await main();
