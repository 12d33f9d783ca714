/**
 * A burst of one-shot work against the cap on agent processes (`--max-agents`): a gateway of
 * fake Claude CLIs with `--max-live 8` and `--max-agents 16`, `burst` messages each to a channel
 * of its own (of 1,000) posted at once. Every POST must be accepted at once whatever the
 * backlog, health must answer meanwhile, no more than the cap of agents may run, and every
 * message must be answered once (none lost, none answered twice).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { percentile } from "../gateway.js";
import { GatewayProcess } from "../gateway-process.js";
import { liveChildren } from "../live-children.js";
import { Connections, postJson } from "../load-client.js";
import { type Figure, figure, poll } from "./figures.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "..", "test", "fixtures", "fake-claude");
const MAX_AGENTS = 16;
const CHANNELS = 1000;

interface Stored {
  id: string;
  kind: string;
  replyTo: string | null;
}

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

export async function oneShotBurst(root: string, burst: number): Promise<Figure[]> {
  const dataDir = join(root, "one-shot-burst");
  mkdirSync(dataDir, { recursive: true });
  const gateway = await GatewayProcess.start({
    dataDir,
    port: 0,
    maxLive: 8,
    maxAgents: MAX_AGENTS,
    engine: { claudeBin: FAKE_CLAUDE, env: { FAKE_CLAUDE_WRITES: "turn" } },
  });
  const connections = new Connections();
  const scenario = `${burst} one-shots at once (1,000 channels, --max-agents ${MAX_AGENTS})`;
  try {
    const processes = sampler(20, () => liveChildren(gateway.pid));
    const health = sampler(100, async () => {
      const started = performance.now();
      await fetch(`${gateway.url}/api/health`);
      return performance.now() - started;
    });
    const accepted: number[] = [];
    const statuses: number[] = [];
    const posted = await Promise.all(
      Array.from({ length: burst }, async (_, index) => {
        const channelId = `burst-${index % CHANNELS}`;
        const sent = performance.now();
        const { status, body } = await postJson(
          gateway,
          `/api/channels/${channelId}/messages`,
          { text: `burst message ${index}` },
          connections,
        );
        accepted.push(performance.now() - sent);
        statuses.push(status);
        return { channelId, id: (body as { id?: string }).id ?? "" };
      }),
    );
    const replies = async (channelId: string, id: string) => {
      const { body } = await gateway.api<{ messages: Stored[] }>(
        "GET",
        `/api/channels/${channelId}/messages`,
      );
      return body.messages.filter((message) => message.replyTo === id).length;
    };
    const waiting = new Set(posted.filter((message) => message.id !== ""));
    const counts = new Map<string, number>();
    await poll(async () => {
      for (const message of [...waiting]) {
        const count = await replies(message.channelId, message.id);
        if (count === 0) return false;
        counts.set(message.id, count);
        waiting.delete(message);
      }
      return true;
    }, 300_000);
    const most = Math.max(...(await processes.stop()));
    const healthTimes = await health.stop();
    const ok = statuses.filter((status) => status === 202).length;
    const twice = [...counts.values()].filter((count) => count > 1).length;
    return [
      figure(scenario, "accepted (202)", `${ok}/${burst}`, `${burst}/${burst}`, ok === burst),
      figure(
        scenario,
        "POST accepted in, p50 / p99",
        `${percentile(accepted, 0.5).toFixed(0)} / ${percentile(accepted, 0.99).toFixed(0)} ms`,
        "p99 < 2000 ms",
        percentile(accepted, 0.99) < 2000,
      ),
      figure(
        scenario,
        "slowest health meanwhile",
        `${Math.max(...healthTimes).toFixed(0)} ms`,
        "< 1000 ms",
        Math.max(...healthTimes) < 1000,
      ),
      figure(
        scenario,
        "agent processes alive at once, at most",
        most,
        `<= ${MAX_AGENTS}`,
        most <= MAX_AGENTS,
      ),
      figure(scenario, "lost (never answered)", waiting.size, "0", waiting.size === 0),
      figure(scenario, "answered twice", twice, "0", twice === 0),
    ];
  } finally {
    connections.destroy();
    await gateway.stop();
  }
}
