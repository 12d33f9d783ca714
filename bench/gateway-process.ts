// A gateway in a process of its own, for benches, `npm run chaos` and the tests that take their
// scenarios: started with `node --expose-gc --import tsx bench/gateway-process.ts --gateway
// '<options JSON>'`, it prints one JSON line `{url, token}` once listening, answers each `stats`
// line on stdin with its memory (after a forced GC), and closes when stdin ends. Its agents are
// whatever engine the options name (the fake Claude CLI, or rudder itself against a fake Messages
// API). The gateway is the built one (dist/, `npm run build`), as `rudder serve` runs it: loading
// src/ through tsx cost each start twice the CPU (1.5 s against 0.75 s here), and the chaos
// tests start about twenty.
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createInterface } from "node:readline";
import type { GatewayOptions } from "../src/gateway/index.js";

/** The options a gateway child takes: the JSON-able part of `GatewayOptions`. */
export type GatewayChildOptions = Omit<GatewayOptions, "logger" | "signal" | "sources">;

export interface GatewayStats {
  rssMiB: number;
  heapMiB: number;
  /** V8's committed heap and the memory outside it (buffers), to say where RSS sits. */
  heapTotalMiB: number;
  externalMiB: number;
  streams: number;
  /** The longest the event loop was held since the last `stats` (or the start), in ms. */
  loopDelayMaxMs: number;
}

/** Resident set size of a process in MiB, from /proc (Linux); 0 once it is gone. */
export function residentMiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The built gateway's entry; a name TypeScript does not resolve, so no build is needed to check. */
const BUILT_GATEWAY = new URL("../dist/gateway/index.js", import.meta.url).href;

async function runGateway(options: GatewayChildOptions): Promise<void> {
  const { startGateway } = (await import(
    BUILT_GATEWAY
  )) as typeof import("../src/gateway/index.js");
  const gateway = await startGateway({
    // As `rudder serve` starts its agents; BENCH_AGENT_SPAWNER=0 spawns them from the gateway.
    agentSpawner: process.env.BENCH_AGENT_SPAWNER !== "0",
    ...options,
    logger: (line) => process.stderr.write(`${line}\n`),
  });
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  process.stdout.write(`${JSON.stringify({ url: gateway.url, token: gateway.token })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line !== "stats") break;
    // Read before the forced collections below, which hold the loop themselves (0.3-0.7 s on a
    // busy machine): counted, they were most of what a burst was said to hold it.
    const loopDelayMaxMs = loopDelay.max / 1e6;
    for (let round = 0; round < 3; round += 1) {
      (globalThis as { gc?: () => void }).gc?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const memory = process.memoryUsage();
    const stats: GatewayStats = {
      rssMiB: residentMiB(process.pid),
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
}

/**
 * A gateway child: its own process group, stderr (its log) kept, the last 64 KB, for when it
 * fails to start and for scenarios that look for a log line.
 */
export class GatewayProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  url = "";
  token = "";
  #stderr = "";
  readonly #lines: AsyncIterator<string>;

  private constructor(options: GatewayChildOptions, env: NodeJS.ProcessEnv, nodeFlags: string[]) {
    this.child = spawn(
      process.execPath,
      [
        ...nodeFlags,
        "--expose-gc",
        "--import",
        "tsx",
        import.meta.filename,
        "--gateway",
        JSON.stringify(options),
      ],
      // As the `rudder` launcher starts a gateway (src/cli.ts's first line): glibc's mmap
      // threshold fixed, so large replies' blocks go back to the system once freed.
      {
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        env: { MALLOC_MMAP_THRESHOLD_: "131072", ...env },
      },
    );
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-64_000);
    });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.#lines = createInterface({ input: this.child.stdout! })[Symbol.asyncIterator]();
    // What V8's tracing flags print (BENCH_NODE_FLAGS="--trace-opt --trace-deopt"), kept.
    const traceFile = process.env.BENCH_GATEWAY_STDOUT;
    if (traceFile) this.child.stdout?.on("data", (chunk) => appendFileSync(traceFile, chunk));
  }

  static async start(
    options: GatewayChildOptions,
    env: NodeJS.ProcessEnv = process.env,
    nodeFlags: string[] = [],
  ): Promise<GatewayProcess> {
    const gateway = new GatewayProcess(options, env, nodeFlags);
    const { url, token } = JSON.parse(await gateway.line()) as { url: string; token: string };
    gateway.url = url;
    gateway.token = token;
    return gateway;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** The last 64 KB of the gateway's stderr: its log. */
  get stderrTail(): string {
    return this.#stderr;
  }

  /** The child's next JSON line; what else it prints (V8's tracing flags) is passed over. */
  async line(): Promise<string> {
    for (;;) {
      const next = await this.#lines.next();
      if (next.done) throw new Error(`the gateway process ended: ${this.#stderr}`);
      if (next.value.startsWith("{")) return next.value;
    }
  }

  async stats(): Promise<GatewayStats> {
    this.child.stdin!.write("stats\n");
    return JSON.parse(await this.line()) as GatewayStats;
  }

  /** `fetch` against the gateway's API with its token; JSON in and out. */
  async api<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as T };
  }

  /** SIGKILLs the gateway process only: its agents, in their own groups, are left to notice. */
  async kill(): Promise<void> {
    this.child.kill("SIGKILL");
    await this.exited;
  }

  /** Ends stdin, so the gateway closes (its agents stopped); SIGKILL after `graceMs`. */
  async stop(graceMs = 30_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

if (process.argv[2] === "--gateway") {
  await runGateway(JSON.parse(process.argv[3] ?? "{}") as GatewayChildOptions);
}
