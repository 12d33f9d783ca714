/**
 * The HTTP surface under abuse, on a gateway with its default limits: a fuzz of every route
 * (the same requests as test/gateway/http-fuzz.test.ts), clients sending their headers or
 * their body a byte a second, and Server-Sent Events floods (bench/sse-flood.ts).
 */
import { join } from "node:path";
import { fuzzEveryRoute } from "../../test/gateway/http-fuzz-cases.js";
import { trickle } from "../../test/gateway/raw-http.js";
import type { GatewayProcess } from "../gateway-process.js";
import { capped, flood, floodGateway } from "../sse-flood.js";
import { type Figure, figure, mib } from "./figures.js";

export async function httpFuzz(gateway: GatewayProcess): Promise<Figure[]> {
  const report = await fuzzEveryRoute(gateway.url, gateway.token);
  const fivexx = (report.byClass["5xx"] ?? 0) + (report.byClass.none ?? 0);
  const health = await fetch(`${gateway.url}/api/health`);
  const scenario = `HTTP fuzz of ${report.routes} routes`;
  return [
    figure(scenario, "requests", report.requests),
    figure(scenario, "answered 4xx", report.byClass["4xx"] ?? 0),
    figure(scenario, "answered 5xx or not at all", fivexx, "0", fivexx === 0),
    figure(scenario, "health afterwards", health.status, "200", health.status === 200),
  ];
}

/** `count` clients trickling their headers and `count` their body, at a byte a second. */
export async function slowClients(gateway: GatewayProcess, count: number): Promise<Figure[]> {
  const port = Number(new URL(gateway.url).port);
  const request = `GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
  const body = JSON.stringify({ text: "slow" }).padEnd(200, " ");
  const head =
    `POST /api/channels/slow/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
    `Authorization: Bearer ${gateway.token}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\n\r\n`;
  const started = Date.now();
  const headers = Array.from({ length: count }, () => trickle(port, request, 1000));
  const bodies = Array.from({ length: count }, () => trickle(port, body, 1000, head));
  const health = await fetch(`${gateway.url}/api/health`);
  const cutHeaders = await Promise.all(headers);
  const cutBodies = await Promise.all(bodies);
  const slowest = (cuts: { ms: number }[]) => Math.max(...cuts.map((cut) => cut.ms)) / 1000;
  const scenario = `slow clients (${count} + ${count}, 1 byte/s)`;
  const stored = await gateway.api<{ messages: unknown[] }>("GET", "/api/channels/slow/messages");
  return [
    figure(
      scenario,
      "headers: cut after (slowest, s)",
      slowest(cutHeaders).toFixed(1),
      "< 20 (--header-timeout 10)",
      slowest(cutHeaders) < 20,
    ),
    figure(
      scenario,
      "body: cut after (slowest, s)",
      slowest(cutBodies).toFixed(1),
      "< 60 (10 + --body-timeout 30)",
      slowest(cutBodies) < 60,
    ),
    figure(
      scenario,
      "others served meanwhile (health)",
      health.status,
      "200",
      health.status === 200,
    ),
    figure(
      scenario,
      "half-sent messages stored",
      stored.body.messages.length,
      "0",
      stored.body.messages.length === 0,
    ),
    figure(scenario, "seconds taken", ((Date.now() - started) / 1000).toFixed(1)),
  ];
}

/**
 * `streams` event streams come and go, `rounds` times, on a gateway whose caps allow them;
 * RSS before, at the peak and `settleMs` after the last round; then the default caps against
 * 200 streams from one client. With `env` (`MALLOC_ARENA_MAX=2`) the same under that allocator.
 */
export async function sseFlood(
  root: string,
  streams: number,
  rounds: number,
  settleMs: number,
  label: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Figure[]> {
  const gateway = await floodGateway(join(root, `sse-${label}`), streams + 100, env);
  const scenario = `SSE flood, ${streams} streams x ${rounds}${label === "default" ? "" : ` (${label})`}`;
  try {
    await flood(gateway, 0, 100, 0);
    const before = await gateway.stats();
    const settled: number[] = [];
    let accepted = 0;
    let peak = 0;
    for (let round = 1; round <= rounds; round += 1) {
      const outcome = await flood(gateway, round, streams, settleMs);
      accepted += outcome.accepted;
      peak = Math.max(peak, outcome.peak.rssMiB);
      settled.push(outcome.settled.rssMiB);
    }
    const last = settled.at(-1) ?? 0;
    return [
      figure(
        scenario,
        "streams accepted",
        accepted,
        `${streams * rounds}`,
        accepted === streams * rounds,
      ),
      figure(scenario, "RSS before / peak", `${mib(before.rssMiB)} / ${mib(peak)}`),
      figure(
        scenario,
        `RSS ${settleMs / 1000}s after each round`,
        settled.map((each) => each.toFixed(1)).join(", "),
      ),
      figure(scenario, "RSS kept after the last round", mib(last - before.rssMiB)),
    ];
  } finally {
    await gateway.stop();
  }
}

export async function sseCaps(root: string): Promise<Figure[]> {
  const gateway = await floodGateway(join(root, "sse-caps"), 0);
  try {
    const { accepted, refused } = await capped(gateway);
    const scenario = "SSE flood, 200 streams from one client";
    return [
      figure(scenario, "accepted (default --max-sse-per-client)", accepted, "64", accepted === 64),
      figure(scenario, "refused with 503", refused, "136", refused === 136),
    ];
  } finally {
    await gateway.stop();
  }
}
