import { afterAll, beforeAll } from "vitest";
import { type LoopbackProxy, startLoopbackProxy } from "../helpers/loopback-proxy.js";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

type WorkerOptions = Parameters<typeof startTestGateway>[0];

export interface ClusterFixture {
  /** A fresh database on the file's throwaway PostgreSQL server. */
  createDatabase(): Promise<string>;
  /** The file's PostgreSQL server itself: stopped and started again for an outage. */
  server(): PostgresCluster;
  /**
   * A loopback proxy in front of the server (to cut or stall one worker's connections) and
   * `url` rewritten to go through it; the proxy is closed after the file, before the workers.
   */
  proxied(url: string): Promise<{ proxy: LoopbackProxy; url: string }>;
  /** A gateway worker named `name` on the database at `url` (fake Claude agents, 2 s leases). */
  worker(url: string, name: string, options?: WorkerOptions): Promise<TestGateway>;
  /** The workers still to be stopped after the file; a test that ended one itself removes it. */
  readonly gateways: TestGateway[];
}

/**
 * For a test file of gateway workers sharing PostgreSQL: one throwaway server for the file
 * (test/helpers/postgres-cluster.ts), and workers on its databases, every one stopped and the
 * server destroyed after the file. `defaults` apply to every worker (a scenario, say).
 */
export function clusterFixture(prefix: string, defaults: WorkerOptions = {}): ClusterFixture {
  let cluster: PostgresCluster | undefined;
  const gateways: TestGateway[] = [];
  const proxies: LoopbackProxy[] = [];
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(async () => {
    // Proxies first: a worker whose statements a stalled proxy holds would wait out their timeouts.
    for (const proxy of proxies) await proxy.close();
    await Promise.allSettled(gateways.map((gateway) => gateway.cleanup()));
    await cluster?.destroy();
  });
  const server = (): PostgresCluster => {
    if (cluster === undefined) throw new Error("the PostgreSQL server has not started");
    return cluster;
  };
  return {
    gateways,
    server,
    createDatabase: () => server().createDatabase(),
    async proxied(url) {
      const { port } = server();
      const proxy = await startLoopbackProxy(port);
      proxies.push(proxy);
      return { proxy, url: url.replace(`:${port}/`, `:${proxy.port}/`) };
    },
    async worker(url, name, options = {}) {
      const gateway = await startTestGateway({
        prefix: `${prefix}-${name}`,
        store: { kind: "postgres", url },
        workerName: name,
        leaseSeconds: 2,
        ...defaults,
        ...options,
      });
      gateways.push(gateway);
      return gateway;
    },
  };
}
