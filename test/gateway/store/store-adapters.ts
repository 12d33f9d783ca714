import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach } from "vitest";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";
import type { GatewayStore } from "../../../src/gateway/store/store.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";

export interface StoreAdapter {
  name: string;
  open(): Promise<GatewayStore>;
}

/**
 * For a test file of the shared store suite: both adapters, each store a fresh one (a SQLite
 * file in a temp folder removed after each test; a database on one PostgreSQL server for the
 * file, started by the first test that needs it and destroyed after the file).
 */
export function storeAdapters(): {
  adapters: StoreAdapter[];
  databasePath(): string;
  postgres(): Promise<PostgresCluster>;
} {
  const folders: string[] = [];
  const databasePath = () => {
    const folder = mkdtempSync(join(tmpdir(), "rudder-store-"));
    folders.push(folder);
    return join(folder, "nested", "gateway.db");
  };
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });
  let cluster: Promise<PostgresCluster> | undefined;
  const postgres = () => {
    cluster ??= startPostgresCluster();
    return cluster;
  };
  afterAll(async () => {
    await (await cluster)?.destroy();
  });
  const adapters: StoreAdapter[] = [
    { name: "SQLite", open: async () => new SqliteGatewayStore(databasePath()) },
    {
      name: "PostgreSQL",
      open: async () => PostgresGatewayStore.open(await (await postgres()).createDatabase()),
    },
  ];
  return { adapters, databasePath, postgres };
}
