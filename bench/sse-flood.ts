// Server-Sent Events come and go: the gateway (its own process, the fake Claude CLI as the
// agent) gets BENCH_SSE (3,000) event streams on one channel, one message whose events fan out
// to all of them, then every socket closes; twice. Prints the gateway's resident memory before,
// at the peak and after each round (after a forced GC), and the ratio after/before (goal: the
// heap back where it was, and nothing growing from one round to the next; RSS keeps V8's grown
// young generation), then how many streams the default caps accept from one client.
// Run: node --import tsx bench/sse-flood.ts
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const STREAMS = Number(process.env.BENCH_SSE ?? 3000);

interface Stats {
  rssMiB: number;
  heapMiB: number;
  /** V8's committed heap and the memory outside it (buffers), to say where RSS sits. */
  heapTotalMiB: number;
  externalMiB: number;
  streams: number;
}

function residentMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : 0;
}

/** The gateway side: started as `sse-flood.ts --gateway <dir> <maxStreams>`, driven by stdin. */
async function runGateway(dataDir: string, maxStreams: number): Promise<void> {
  const { startGateway } = await import("../src/gateway/index.js");
  const gateway = await startGateway({
    dataDir,
    port: 0,
    engine: {
      claudeBin: join(import.meta.dirname, "..", "test", "fixtures", "fake-claude"),
    },
    // 0: the defaults.
    ...(maxStreams > 0
      ? { maxEventStreams: maxStreams, maxEventStreamsPerClient: maxStreams }
      : {}),
  });
  process.stdout.write(`${JSON.stringify({ url: gateway.url, token: gateway.token })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line !== "stats") break;
    for (let round = 0; round < 3; round += 1) {
      (globalThis as { gc?: () => void }).gc?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const stats: Stats = {
      rssMiB: residentMiB(process.pid),
      heapMiB: process.memoryUsage().heapUsed / 2 ** 20,
      heapTotalMiB: process.memoryUsage().heapTotal / 2 ** 20,
      externalMiB: process.memoryUsage().external / 2 ** 20,
      streams: gateway.eventStreams(),
    };
    process.stdout.write(`${JSON.stringify(stats)}\n`);
  }
  await gateway.close();
}

class GatewayProcess {
  readonly child: ChildProcess;
  readonly #lines: AsyncIterator<string>;

  constructor(dataDir: string, maxStreams: number) {
    this.child = spawn(
      process.execPath,
      [
        "--expose-gc",
        "--import",
        "tsx",
        import.meta.filename,
        "--gateway",
        dataDir,
        String(maxStreams),
      ],
      { stdio: ["pipe", "pipe", "inherit"], detached: true },
    );
    this.#lines = createInterface({ input: this.child.stdout! })[Symbol.asyncIterator]();
  }

  async line(): Promise<string> {
    const next = await this.#lines.next();
    if (next.done) throw new Error("the gateway process ended");
    return next.value;
  }

  async stats(): Promise<Stats> {
    this.child.stdin!.write("stats\n");
    return JSON.parse(await this.line()) as Stats;
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin!.end();
    await exited;
  }
}

/** One raw event stream: resolves `connected` at the stream's first comment. */
function openStream(port: number, token: string, channel: string) {
  const socket: Socket = connect(port, "127.0.0.1");
  let text = "";
  const seen = (needle: string) =>
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (text.includes(needle)) resolve(true);
        else if (/^HTTP\/1\.1 (?!200)/.test(text)) resolve(false);
        else return false;
        socket.off("data", check);
        return true;
      };
      if (check() === false) {
        socket.on("data", check);
        socket.once("close", () => resolve(text.includes(needle)));
      }
    });
  socket.on("data", (chunk) => {
    text += chunk.toString("utf8");
    if (text.length > 1_000_000) text = text.slice(-1000);
  });
  socket.on("error", () => undefined);
  socket.write(
    `GET /api/channels/${channel}/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `Authorization: Bearer ${token}\r\n\r\n`,
  );
  return { socket, connected: seen(": connected"), seen };
}

async function flood(
  gateway: GatewayProcess,
  url: string,
  token: string,
  round: number,
  count = STREAMS,
) {
  const port = Number(new URL(url).port);
  const streams = [];
  for (let index = 0; index < count; index += 1) {
    const stream = openStream(port, token, "flood");
    streams.push(stream);
    if (index % 200 === 199) await Promise.all(streams.slice(-200).map((each) => each.connected));
  }
  const accepted = (await Promise.all(streams.map((each) => each.connected))).filter(Boolean);
  const ended = streams.map((each) => each.seen('"type":"turn_end"'));
  const posted = await fetch(`${url}/api/channels/flood/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ text: `round ${round}: ${"x".repeat(8000)}` }),
  });
  if (posted.status !== 202) throw new Error(`POST answered ${posted.status}`);
  await Promise.all(ended);
  const peak = await gateway.stats();
  for (const stream of streams) stream.socket.destroy();
  let after = await gateway.stats();
  for (let tries = 0; after.streams > 0 && tries < 100; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    after = await gateway.stats();
  }
  // Sockets finish closing a moment after their streams are given back.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  after = await gateway.stats();
  return { accepted: accepted.length, peak, after };
}

async function capped(url: string, token: string): Promise<{ accepted: number; refused: number }> {
  const port = Number(new URL(url).port);
  const streams = Array.from({ length: 200 }, () => openStream(port, token, "capped"));
  const answers = await Promise.all(streams.map((each) => each.connected));
  for (const stream of streams) stream.socket.destroy();
  const accepted = answers.filter(Boolean).length;
  return { accepted, refused: answers.length - accepted };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "rudder-sse-flood-"));
  const gateway = new GatewayProcess(join(root, "data"), STREAMS + 100);
  try {
    const { url, token } = JSON.parse(await gateway.line()) as { url: string; token: string };
    // One message first, so the agent process and its first turn are not counted as the leak.
    await flood(gateway, url, token, 0, 100);
    const before = await gateway.stats();
    const mib = (value: number) => `${value.toFixed(1)} MiB`;
    console.log(`streams per round: ${STREAMS}`);
    console.log(
      `before:  rss ${mib(before.rssMiB)}, heap ${mib(before.heapMiB)} used of ${mib(before.heapTotalMiB)}, external ${mib(before.externalMiB)}`,
    );
    for (const round of [1, 2]) {
      const { accepted, peak, after } = await flood(gateway, url, token, round);
      console.log(
        `round ${round}: ${accepted} accepted; peak rss ${mib(peak.rssMiB)}; after rss ${mib(after.rssMiB)}, heap ${mib(after.heapMiB)} used of ${mib(after.heapTotalMiB)}, external ${mib(after.externalMiB)}, ${after.streams} streams open`,
      );
      console.log(
        `  ratio after/before: rss ${(after.rssMiB / before.rssMiB).toFixed(2)}, heap ${(after.heapMiB / before.heapMiB).toFixed(2)} (retained ${mib(after.rssMiB - before.rssMiB)} rss)`,
      );
    }
  } finally {
    await gateway.stop();
  }
  const defaults = new GatewayProcess(join(root, "data-defaults"), 0);
  try {
    const { url, token } = JSON.parse(await defaults.line()) as { url: string; token: string };
    const { accepted, refused } = await capped(url, token);
    console.log(
      `default caps, 200 streams from one client: ${accepted} accepted, ${refused} refused (503)`,
    );
  } finally {
    await defaults.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--gateway") {
  const maxStreams = Number(process.argv[4]);
  await runGateway(process.argv[3]!, maxStreams);
} else {
  await main();
}
