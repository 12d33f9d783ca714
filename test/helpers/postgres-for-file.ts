/**
 * One throwaway PostgreSQL for a test file: started before its tests, destroyed after them, and
 * first what its tests left to close (workers, clients, listeners), last in first out.
 */
import { afterAll, beforeAll } from "vitest";
import { type PostgresCluster, startPostgresCluster } from "./postgres-cluster.js";

export interface FilePostgres {
  /** The file's server (set once its `beforeAll` ran). */
  readonly cluster: PostgresCluster;
  /** Closed at the file's end, before the server goes, the last pushed first. */
  readonly cleanups: Array<() => Promise<unknown>>;
}

export function postgresForFile(): FilePostgres {
  let cluster: PostgresCluster | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  }, 60_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    await cluster?.destroy();
  });
  return {
    get cluster() {
      if (cluster === undefined) throw new Error("the file's PostgreSQL is not started yet");
      return cluster;
    },
    cleanups,
  };
}
