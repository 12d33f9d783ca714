// The process `GatewayProcess` (bench/gateway-process.ts) starts: `node --expose-gc
// bench/gateway-child.mjs --gateway '<options JSON>'` runs the built gateway (dist/, `npm run
// build`) with those options, prints one JSON line `{url, token}` once listening, answers each
// `stats` line on stdin with its memory (after a forced GC) and the longest event-loop delay
// since the last one, and closes when stdin ends. Plain JavaScript, so that node runs it
// without tsx's loader, whose hooks thread then resolves every import of the gateway: a start
// took 1.25 s of CPU with it and 0.5 s without here, and the chaos tests start about twenty.
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createInterface } from "node:readline";

/** Resident set size of this process in MiB, from /proc (Linux). */
function residentMiB() {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Number(match[1]) / 1024 : 0;
}

const options = JSON.parse(process.argv[3] ?? "{}");
const { startGateway } = await import(new URL("../dist/gateway/index.js", import.meta.url).href);
const gateway = await startGateway({
  agentSpawner: process.env.BENCH_AGENT_SPAWNER !== "0",
  ...options,
  logger: (line) => process.stderr.write(`${line}\n`),
});
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
process.stdout.write(`${JSON.stringify({ url: gateway.url, token: gateway.token })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== "stats") break;
  const loopDelayMaxMs = loopDelay.max / 1e6;
  for (let round = 0; round < 3; round += 1) {
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const memory = process.memoryUsage();
  const stats = {
    rssMiB: residentMiB(),
    heapMiB: memory.heapUsed / 2 ** 20,
    heapTotalMiB: memory.heapTotal / 2 ** 20,
    externalMiB: memory.external / 2 ** 20,
    streams: gateway.eventStreams(),
    loopDelayMaxMs,
  };
  loopDelay.reset();
  process.stdout.write(`${JSON.stringify(stats)}\n`);
}
await gateway.close();
