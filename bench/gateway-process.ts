// A gateway in a process of its own, for benches, `npm run chaos` and the tests that take their
// scenarios: the child (bench/gateway-child.mjs) prints one JSON line `{url, token}` once
// listening, answers each `stats` line on stdin with its memory (after a forced GC), and closes
// when stdin ends. Its agents are whatever engine the options name (the fake Claude CLI, or
// rudder itself against a fake Messages API). The gateway is the built one (dist/, `npm run
// build`), as `rudder serve` runs it: loading src/ through tsx cost each start twice the CPU
// (1.5 s against 0.75 s), and tsx's loader alone another 0.75 s against 0.5 s without.
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
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

/** The child's program: plain JavaScript, started without tsx (see bench/gateway-child.mjs). */
const GATEWAY_CHILD = new URL("gateway-child.mjs", import.meta.url).pathname;

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
      [...nodeFlags, "--expose-gc", GATEWAY_CHILD, "--gateway", JSON.stringify(options)],
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
