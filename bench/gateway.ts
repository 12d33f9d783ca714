// The gateway under load, in one run, over HTTP with the fake Claude CLI as every agent:
//   1. warm: 8 channels, each with a kept process, messages posted back to back;
//   2. 1,000 channels against maxLive 8: one message per channel, so 8 channels keep their
//      process and the rest are answered by one-shot processes.
// Each message's latency is from the POST to its `turn_end` on the channel's SSE stream.
// Prints messages per second, p50/p99 latency, and resident memory (gateway and agents).
// Run: node --import tsx bench/gateway.ts   (BENCH_CHANNELS, BENCH_CONCURRENCY to change)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { startGateway } from "../src/gateway/index.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "test", "fixtures", "fake-claude");
const MAX_LIVE = 8;

export function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  const index = Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? 0;
}

/** Resident set size of a process in MiB, from /proc (Linux); 0 when unknown. */
function residentMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

export interface Gateway {
  url: string;
  token: string;
}

/**
 * One channel's SSE stream, kept open like the page keeps it. `send` POSTs a message and
 * resolves with the milliseconds until the `turn_end` that follows that message's
 * `message_received` (events replayed from earlier turns are skipped by message id). `via`
 * posts through another gateway (a worker on the same database) than the stream's.
 */
export class ChannelStream {
  readonly #gateway: Gateway;
  readonly #channelId: string;
  readonly #controller = new AbortController();
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #buffered = "";
  readonly #decoder = new TextDecoder();

  constructor(gateway: Gateway, channelId: string) {
    this.#gateway = gateway;
    this.#channelId = channelId;
  }

  async open(): Promise<void> {
    const response = await fetch(`${this.#gateway.url}/api/channels/${this.#channelId}/events`, {
      headers: { authorization: `Bearer ${this.#gateway.token}` },
      signal: this.#controller.signal,
    });
    if (!response.body) throw new Error("no event stream");
    this.#reader = response.body.getReader();
    await this.#readUntil((block) => block.startsWith(": connected"));
  }

  async #readUntil(predicate: (block: string) => boolean): Promise<void> {
    for (;;) {
      for (
        let end = this.#buffered.indexOf("\n\n");
        end !== -1;
        end = this.#buffered.indexOf("\n\n")
      ) {
        const block = this.#buffered.slice(0, end);
        this.#buffered = this.#buffered.slice(end + 2);
        if (predicate(block)) return;
      }
      const { value, done } = await this.#reader!.read();
      if (done) throw new Error(`the event stream of ${this.#channelId} ended early`);
      this.#buffered += this.#decoder.decode(value, { stream: true });
    }
  }

  async send(text: string, via: Gateway = this.#gateway): Promise<number> {
    const started = performance.now();
    const posted = await fetch(`${via.url}/api/channels/${this.#channelId}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${via.token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ text }),
    });
    if (posted.status !== 202) throw new Error(`POST answered ${posted.status}`);
    const { id } = (await posted.json()) as { id: string };
    await this.#readUntil(
      (block) => block.includes('"type":"message_received"') && block.includes(id),
    );
    await this.#readUntil((block) => block.includes('"type":"turn_end"'));
    return performance.now() - started;
  }

  async close(): Promise<void> {
    this.#controller.abort();
    await this.#reader?.cancel().catch(() => undefined);
  }
}

async function oneMessage(gateway: Gateway, channelId: string, text: string): Promise<number> {
  const stream = new ChannelStream(gateway, channelId);
  await stream.open();
  try {
    return await stream.send(text);
  } finally {
    await stream.close();
  }
}

/** Runs `jobs` with at most `concurrency` at once; returns each latency and the wall time. */
async function drive(
  jobs: Array<() => Promise<number>>,
  concurrency: number,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next];
      next += 1;
      if (job) latencies.push(await job());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

export function report(label: string, result: { latencies: number[]; seconds: number }): void {
  const { latencies, seconds } = result;
  process.stdout.write(
    `${label.padEnd(34)} ${String(latencies.length).padStart(5)} msgs  ` +
      `${(latencies.length / seconds).toFixed(1).padStart(7)} msg/s  ` +
      `p50 ${percentile(latencies, 0.5).toFixed(1).padStart(7)} ms  ` +
      `p99 ${percentile(latencies, 0.99).toFixed(1).padStart(7)} ms\n`,
  );
}

interface Memory {
  gatewayMiB: number;
  agents: number;
  agentsMiB: number;
}

/** The gateway's RSS and the summed RSS of its agent processes (kept and one-shot) now. */
async function memory(gateway: Gateway): Promise<Memory> {
  const response = await fetch(`${gateway.url}/api/runners`, {
    headers: { authorization: `Bearer ${gateway.token}` },
  });
  const { runners } = (await response.json()) as { runners: Array<{ pid: number | null }> };
  return {
    gatewayMiB: process.memoryUsage().rss / 2 ** 20,
    agents: runners.length,
    agentsMiB: runners.reduce((sum, runner) => sum + (runner.pid ? residentMiB(runner.pid) : 0), 0),
  };
}

function memoryLine(label: string, sample: Memory): void {
  process.stdout.write(
    `${label.padEnd(34)} gateway RSS ${sample.gatewayMiB.toFixed(0)} MiB, ` +
      `${sample.agents} agent processes ${sample.agentsMiB.toFixed(0)} MiB\n`,
  );
}

/** Samples memory every 250 ms until stopped; resolves with the highest total. */
function peakMemory(gateway: Gateway): { stop(): Promise<Memory> } {
  let peak: Memory = { gatewayMiB: 0, agents: 0, agentsMiB: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const sample = await memory(gateway);
      if (sample.gatewayMiB + sample.agentsMiB > peak.gatewayMiB + peak.agentsMiB) peak = sample;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return peak;
    },
  };
}

export async function main(): Promise<void> {
  const channels = Number(process.env.BENCH_CHANNELS ?? 1000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const dataDir = mkdtempSync(join(tmpdir(), "rudder-bench-gateway-"));
  const gateway = await startGateway({
    dataDir,
    port: 0,
    maxLive: MAX_LIVE,
    engine: { claudeBin: FAKE_CLAUDE, env: { FAKE_CLAUDE_SCENARIO: "normal" } },
  });
  try {
    process.stdout.write(
      `gateway bench: fake Claude CLI, maxLive ${MAX_LIVE}, ${concurrency} messages in flight\n`,
    );
    const streams = Array.from(
      { length: MAX_LIVE },
      (_, index) => new ChannelStream(gateway, `warm-${index}`),
    );
    await Promise.all(streams.map((stream) => stream.open()));
    await Promise.all(streams.map((stream) => stream.send("spawn")));
    const warmStarted = performance.now();
    const perChannel = await Promise.all(
      streams.map(async (stream) => {
        const latencies: number[] = [];
        for (let index = 0; index < 50; index += 1)
          latencies.push(await stream.send(`warm ${index}`));
        return latencies;
      }),
    );
    const warm = {
      latencies: perChannel.flat(),
      seconds: (performance.now() - warmStarted) / 1000,
    };
    await Promise.all(streams.map((stream) => stream.close()));
    report(`warm: ${MAX_LIVE} kept processes`, warm);
    memoryLine("  after warm", await memory(gateway));
    const sampler = peakMemory(gateway);
    const many = await drive(
      Array.from(
        { length: channels },
        (_, index) => () => oneMessage(gateway, `channel-${index}`, `hello ${index}`),
      ),
      concurrency,
    );
    const peak = await sampler.stop();
    report(`${channels} channels vs maxLive ${MAX_LIVE}`, many);
    memoryLine("  peak during the channels", peak);
    memoryLine("  after the channels", await memory(gateway));
    const ratio = percentile(many.latencies, 0.5) / percentile(warm.latencies, 0.5);
    process.stdout.write(
      `ratio: a message at the cap (mostly one-shot) takes ${ratio.toFixed(1)}x the p50 of a kept process\n`,
    );
  } finally {
    await gateway.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
