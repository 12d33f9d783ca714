// Server-Sent Events come and go: the gateway (its own process, the fake Claude CLI as the
// agent) gets BENCH_SSE (3,000) event streams on one channel, one message whose events fan out
// to all of them, then every socket closes; three rounds. Prints the gateway's resident memory
// before, at the peak, 3 s after and BENCH_SSE_SETTLE_MS (20 s) after each round (after a forced
// GC), with the ratio to before (goal: back within a few MiB once V8 has shrunk its grown young
// generation, and flat from one round to the next), then how many streams the default caps
// accept from one client. BENCH_GATEWAY_NODE_FLAGS passes node flags to the gateway process.
// Run: node --import tsx bench/sse-flood.ts
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type GatewayChildOptions, GatewayProcess, type GatewayStats } from "./gateway-process.js";

const STREAMS = Number(process.env.BENCH_SSE ?? 3000);
const SETTLE_MS = Number(process.env.BENCH_SSE_SETTLE_MS ?? 20_000);
const FAKE_CLAUDE = join(import.meta.dirname, "..", "test", "fixtures", "fake-claude");

/** A gateway whose agents are the fake Claude CLI; `maxStreams` 0 keeps the default caps. */
export function floodGateway(
  dataDir: string,
  maxStreams: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<GatewayProcess> {
  const options: GatewayChildOptions = {
    dataDir,
    port: 0,
    engine: { claudeBin: FAKE_CLAUDE },
    ...(maxStreams > 0
      ? { maxEventStreams: maxStreams, maxEventStreamsPerClient: maxStreams }
      : {}),
  };
  const nodeFlags = process.env.BENCH_GATEWAY_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  return GatewayProcess.start(options, env, nodeFlags);
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

/**
 * One round: `count` streams on one channel, one message fanned out to all, every socket
 * closed; the gateway's memory at the peak, 3 s after and `settleMs` after that.
 */
export async function flood(
  gateway: GatewayProcess,
  round: number,
  count = STREAMS,
  settleMs = SETTLE_MS,
): Promise<{ accepted: number; peak: GatewayStats; after: GatewayStats; settled: GatewayStats }> {
  const { url, token } = gateway;
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
  // V8 gives back its grown heap only once allocation has been quiet a while (its memory
  // reducer); measured again after SETTLE_MS.
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const settled = await gateway.stats();
  return { accepted: accepted.length, peak, after, settled };
}

/** 200 streams from one client against `gateway`'s caps: how many got in, how many a 503. */
export async function capped(
  gateway: GatewayProcess,
): Promise<{ accepted: number; refused: number }> {
  const { url, token } = gateway;
  const port = Number(new URL(url).port);
  const streams = Array.from({ length: 200 }, () => openStream(port, token, "capped"));
  const answers = await Promise.all(streams.map((each) => each.connected));
  for (const stream of streams) stream.socket.destroy();
  const accepted = answers.filter(Boolean).length;
  return { accepted, refused: answers.length - accepted };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "rudder-sse-flood-"));
  const gateway = await floodGateway(join(root, "data"), STREAMS + 100);
  try {
    // One message first, so the agent process and its first turn are not counted as the leak.
    await flood(gateway, 0, 100, 0);
    const before = await gateway.stats();
    const mib = (value: number) => `${value.toFixed(1)} MiB`;
    console.log(`streams per round: ${STREAMS}`);
    console.log(
      `before:  rss ${mib(before.rssMiB)}, heap ${mib(before.heapMiB)} used of ${mib(before.heapTotalMiB)}, external ${mib(before.externalMiB)}`,
    );
    for (const round of [1, 2, 3]) {
      const { accepted, peak, after, settled } = await flood(gateway, round);
      console.log(
        `round ${round}: ${accepted} accepted; peak rss ${mib(peak.rssMiB)}; after rss ${mib(after.rssMiB)}, heap ${mib(after.heapMiB)} used of ${mib(after.heapTotalMiB)}, external ${mib(after.externalMiB)}, ${after.streams} streams open`,
      );
      console.log(
        `  ${SETTLE_MS / 1000}s later: rss ${mib(settled.rssMiB)} (retained ${mib(settled.rssMiB - before.rssMiB)}, ratio ${(settled.rssMiB / before.rssMiB).toFixed(2)}), heap ${mib(settled.heapMiB)} used of ${mib(settled.heapTotalMiB)} (ratio ${(settled.heapMiB / before.heapMiB).toFixed(2)})`,
      );
    }
  } finally {
    await gateway.stop();
  }
  const defaults = await floodGateway(join(root, "data-defaults"), 0);
  try {
    const { accepted, refused } = await capped(defaults);
    console.log(
      `default caps, 200 streams from one client: ${accepted} accepted, ${refused} refused (503)`,
    );
  } finally {
    await defaults.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
