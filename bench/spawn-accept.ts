// How agent spawns in a server's own event loop hold its taking of new connections, in plain
// Node with none of the gateway: a server (a process of its own, 100 MB of heap as a gateway
// has) answers each request at once while it starts short-lived children back to back, at most
// 16 alive (`sleep 0.3` through the parent-death `setpriv`, as agents start), one start per turn
// of its loop. 400 clients connect at once, each with a request; printed: how long they waited
// for their answers (p50/p99, the last), with no spawns, with spawns made by the server itself,
// and with spawns asked of the agent spawner (src/claude-cli/spawner/).
// Run: node --import tsx bench/spawn-accept.ts   (BENCH_CLIENTS, BENCH_ROUNDS to change)
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import net from "node:net";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { spawnDirect } from "../src/claude-cli/spawn-direct.js";
import type { ChildSpawner } from "../src/claude-cli/spawned-child.js";
import { AgentSpawner } from "../src/claude-cli/spawner/agent-spawner.js";
import { percentile } from "./gateway.js";

type Mode = "none" | "direct" | "spawner";
const MAX_ALIVE = 16;

async function serve(mode: Mode): Promise<void> {
  const ballast = Array.from({ length: 100 }, () => Buffer.alloc(1 << 20, 1));
  const spawner: ChildSpawner | undefined =
    mode === "direct"
      ? { spawn: spawnDirect }
      : mode === "spawner"
        ? new AgentSpawner({ log: (line) => process.stderr.write(`${line}\n`) })
        : undefined;
  let alive = 0;
  let started = 0;
  let running = true;
  const startOne = () => {
    if (!running || spawner === undefined) return;
    if (alive < MAX_ALIVE) {
      alive += 1;
      started += 1;
      const child = spawner.spawn(["sleep", "0.3"], {
        cwd: undefined,
        env: { PATH: "/usr/bin:/bin" },
      });
      child.stdout?.resume();
      child.stderr?.resume();
      child.on("exit", () => {
        alive -= 1;
      });
      child.on("error", () => {
        alive -= 1;
      });
    }
    setImmediate(startOne);
  };
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.end("ok"));
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address() as net.AddressInfo;
    process.stdout.write(`${address.port}\n`);
  });
  // Starts go on from the first line (the clients about to connect) to stdin's end.
  const lines = createInterface({ input: process.stdin });
  for await (const _ of lines) startOne();
  running = false;
  process.stdout.write(`${started}\n`);
  server.close();
  if (spawner instanceof AgentSpawner) await spawner.close();
  void ballast.length;
  process.exit(0);
}

/** Each of `count` clients connects at once and sends a request; milliseconds to each answer. */
async function burst(port: number, count: number): Promise<number[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve, reject) => {
          const started = performance.now();
          const socket = net.connect({ host: "127.0.0.1", port }, () =>
            socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
          );
          socket.once("data", () => {
            resolve(performance.now() - started);
            socket.destroy();
          });
          socket.on("error", reject);
        }),
    ),
  );
}

async function measure(mode: Mode, clients: number): Promise<{ times: number[]; started: number }> {
  const server = spawn(
    process.execPath,
    [...process.execArgv, import.meta.filename, "--serve", mode],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const lines = createInterface({ input: server.stdout })[Symbol.asyncIterator]();
  const port = Number((await lines.next()).value);
  server.stdin.write("go\n");
  // Let the starts get going (the spawner starts with the first).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const times = await burst(port, clients);
  server.stdin.end();
  const started = Number((await lines.next()).value);
  await new Promise((resolve) => server.once("exit", resolve));
  return { times, started };
}

if (process.argv[2] === "--serve") {
  await serve(process.argv[3] as Mode);
} else {
  const clients = Number(process.env.BENCH_CLIENTS ?? 400);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  process.stdout.write(
    `${clients} connections at once, children started one per turn (<= ${MAX_ALIVE} alive)\n`,
  );
  for (let round = 1; round <= rounds; round += 1) {
    for (const mode of ["none", "direct", "spawner"] as const) {
      const { times, started } = await measure(mode, clients);
      const row = `round ${round}, ${`spawns: ${mode}`.padEnd(16)}`;
      process.stdout.write(
        `${row} answered p50 ${percentile(times, 0.5).toFixed(0).padStart(6)} ms, ` +
          `p99 ${percentile(times, 0.99).toFixed(0).padStart(6)} ms, ` +
          `last ${Math.max(...times)
            .toFixed(0)
            .padStart(6)} ms; ${started} children started\n`,
      );
    }
  }
}
