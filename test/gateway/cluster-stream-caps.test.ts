/**
 * Event-stream caps count per worker (docs/cluster.md, "Stream caps are per worker"): with two workers on one
 * PostgreSQL and `--max-sse-per-client 1`, one client holds a stream on each, and a second on
 * either is refused by that worker alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

let cluster: PostgresCluster;
const gateways: TestGateway[] = [];
const streams: AbortController[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
}, 60_000);
afterAll(async () => {
  for (const stream of streams) stream.abort();
  await Promise.allSettled(gateways.map((gateway) => gateway.cleanup()));
  await cluster?.destroy();
});

/** Opens a channel's event stream; resolves with its status (and the refusal's text). */
async function openStream(gateway: TestGateway): Promise<{ status: number; text: string }> {
  const controller = new AbortController();
  streams.push(controller);
  const response = await fetch(`${gateway.url}/api/channels/c/events`, {
    headers: { authorization: `Bearer ${gateway.token}` },
    signal: controller.signal,
  });
  return { status: response.status, text: response.ok ? "" : await response.text() };
}

describe("event-stream caps with several workers", () => {
  it("count the streams a client holds on each worker, not across them", async () => {
    const url = await cluster.createDatabase();
    for (const name of ["one", "two"]) {
      gateways.push(
        await startTestGateway({
          prefix: `stream-caps-${name}`,
          store: { kind: "postgres", url },
          workerName: name,
          maxEventStreamsPerClient: 1,
        }),
      );
    }
    const [one, two] = gateways as [TestGateway, TestGateway];
    expect((await openStream(one)).status).toBe(200);
    expect((await openStream(two)).status).toBe(200);
    const refused = await openStream(one);
    expect(refused.status).toBe(503);
    expect(refused.text).toContain("--max-sse-per-client");
    expect(one.eventStreams()).toBe(1);
    expect(two.eventStreams()).toBe(1);
  }, 60_000);
});
