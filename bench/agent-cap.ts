// Bursts of one-shot work against the cap on agent processes (`--max-agents`): a gateway in a
// process of its own, its agents the fake Claude CLI, 1,000 channels against `--max-live 8`,
// and bursts of 400 messages (each to a channel of its own) posted at once. Prints, per burst,
// how fast POSTs were accepted (p50/p99), and a message posted every 100 ms meanwhile, how long messages took to be answered (stored reply
// time minus stored message time: p50/p99), throughput, the most agent processes alive at once
// (counted in /proc, children of the gateway or of its agent spawner) and how long /api/health
// took meanwhile. Agents start from the agent spawner, as `rudder serve` starts them; then, as
// a reference measured in the same run, a burst against a gateway that spawns them itself.
// Run: node --import tsx bench/agent-cap.ts   (BENCH_CHANNELS, BENCH_BURST, BENCH_BURSTS,
// BENCH_REFERENCE_BURSTS (0: none), BENCH_MAX_AGENTS to change)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { percentile } from "./gateway.js";
import { GatewayProcess } from "./gateway-process.js";
import { liveChildren } from "./live-children.js";
import { Connections, postJson } from "./load-client.js";

const FAKE_CLAUDE =
  process.env.BENCH_AGENT ?? join(import.meta.dirname, "..", "test", "fixtures", "fake-claude");

/** Samples `probe` every `everyMs` until stopped; resolves with every value. */
function sampler<T>(everyMs: number, probe: () => Promise<T> | T): { stop(): Promise<T[]> } {
  const values: T[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      values.push(await probe());
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return values;
    },
  };
}

interface Stored {
  kind: string;
  createdAt: string;
  replyTo: string | null;
  id: string;
}

/** Milliseconds from each message to its stored reply, once every one has one. */
async function answerTimes(
  gateway: GatewayProcess,
  posted: Array<{ channelId: string; id: string }>,
): Promise<number[]> {
  const waiting = new Map(posted.map((message) => [message.id, message.channelId]));
  const times: number[] = [];
  const deadline = Date.now() + 600_000;
  while (waiting.size > 0) {
    if (Date.now() > deadline) throw new Error(`${waiting.size} messages never answered`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const [id, channelId] of [...waiting]) {
      const { body } = await gateway.api<{ messages: Stored[] }>(
        "GET",
        `/api/channels/${channelId}/messages`,
      );
      const message = body.messages.find((stored) => stored.id === id);
      const reply = body.messages.find((stored) => stored.replyTo === id);
      if (!message || !reply) break;
      times.push(Date.parse(reply.createdAt) - Date.parse(message.createdAt));
      waiting.delete(id);
    }
  }
  return times;
}

const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;

const channels = Number(process.env.BENCH_CHANNELS ?? 1000);
const burst = Number(process.env.BENCH_BURST ?? 400);
const maxAgents = Number(process.env.BENCH_MAX_AGENTS ?? 16);

/**
 * A gateway whose agents start from its agent spawner (as `rudder serve` starts them) or from
 * the gateway itself (the reference: as before the spawner), through `bursts` bursts; resolves
 * with the most agent processes seen alive at once.
 */
async function measure(agentSpawner: boolean, bursts: number): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), "rudder-bench-agent-cap-"));
  const gateway = await GatewayProcess.start(
    {
      dataDir,
      port: 0,
      maxLive: 8,
      maxAgents,
      agentSpawner,
      engine: { claudeBin: FAKE_CLAUDE, env: { FAKE_CLAUDE_WRITES: "turn" } },
    },
    process.env,
    process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [],
  );
  const connections = new Connections();
  process.stdout.write(
    `${channels} channels, --max-live 8, --max-agents ${maxAgents}, ${bursts} bursts of ${burst}, ` +
      `agents started ${agentSpawner ? "by the agent spawner (as rudder serve does)" : "by the gateway itself (reference: before the spawner)"}\n`,
  );
  let worst = 0;
  try {
    for (let round = 0; round < bursts; round += 1) {
      await gateway.stats();
      const processes = sampler(20, () => liveChildren(gateway.pid));
      const health = sampler(100, async () => {
        const started = performance.now();
        await fetch(`${gateway.url}/api/health`);
        return performance.now() - started;
      });
      const started = performance.now();
      const accepted: number[] = [];
      const posted = await Promise.all(
        Array.from({ length: burst }, async (_, index) => {
          const channelId = `cap-${(round * burst + index) % channels}`;
          const sent = performance.now();
          const { status, body } = await postJson(
            gateway,
            `/api/channels/${channelId}/messages`,
            { text: `burst ${round} message ${index}` },
            connections,
          );
          accepted.push(performance.now() - sent);
          if (status !== 202) throw new Error(`POST answered ${status}`);
          return { channelId, id: (body as { id: string }).id };
        }),
      );
      const held = (await gateway.stats()).loopDelayMaxMs;
      process.stdout.write(
        `burst ${round + 1}: ${burst} accepted in ${ms(performance.now() - started)}: ` +
          `p50 ${ms(percentile(accepted, 0.5))} p99 ${ms(percentile(accepted, 0.99))}; ` +
          `the gateway's event loop held at most ${ms(held)}\n`,
      );
      // While the burst waits: one more message every 100 ms for 5 s, each timed to its 202.
      const paced: number[] = [];
      for (let index = 0; index < 50; index += 1) {
        const sent = performance.now();
        const { body } = await postJson(
          gateway,
          `/api/channels/paced-${round}/messages`,
          { text: `paced ${index}` },
          connections,
        );
        paced.push(performance.now() - sent);
        posted.push({ channelId: `paced-${round}`, id: (body as { id: string }).id });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      process.stdout.write(
        `burst ${round + 1}: a message every 100 ms meanwhile accepted in ` +
          `p50 ${ms(percentile(paced, 0.5))} p99 ${ms(percentile(paced, 0.99))}\n`,
      );
      const answered = await answerTimes(gateway, posted);
      const seconds = (performance.now() - started) / 1000;
      const most = Math.max(...(await processes.stop()));
      const healthTimes = await health.stop();
      worst = Math.max(worst, most);
      process.stdout.write(
        `burst ${round + 1}: answered p50 ${ms(percentile(answered, 0.5))} p99 ${ms(percentile(answered, 0.99))}; ` +
          `${(posted.length / seconds).toFixed(1)} msg/s; ` +
          `health p99 ${ms(percentile(healthTimes, 0.99))}; ` +
          `agent processes at most ${most}\n`,
      );
    }
  } finally {
    connections.destroy();
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return worst;
}

export async function main(): Promise<void> {
  const bursts = Number(process.env.BENCH_BURSTS ?? 3);
  const reference = Number(process.env.BENCH_REFERENCE_BURSTS ?? 1);
  let worst = await measure(true, bursts);
  if (reference > 0) worst = Math.max(worst, await measure(false, reference));
  if (worst > maxAgents) {
    process.stdout.write(`FAILED: ${worst} agent processes alive at once, over ${maxAgents}\n`);
    process.exitCode = 1;
  }
}

await main();
