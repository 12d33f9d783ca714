import { join } from "node:path";
import type { GatewayStore } from "./store.js";
import type { StoreLocation } from "./store-location.js";

/**
 * Opens the store `location` names: SQLite as `<dataDir>/gateway.db` (`StoreUnavailableError`
 * when it cannot be written), or the PostgreSQL database of the URL (migrated on open;
 * `StoreUnavailableError` when it cannot be reached).
 * Each adapter is loaded only when chosen, so SQLite users never load `pg` and the reverse.
 */
export async function openStore(
  location: StoreLocation,
  dataDir: string,
  logger?: (line: string) => void,
): Promise<GatewayStore> {
  if (location.kind === "postgres") {
    const { PostgresGatewayStore } = await import("./postgres/postgres-store.js");
    return PostgresGatewayStore.open(location.url, logger ? { logger } : {});
  }
  const { SqliteGatewayStore } = await import("./sqlite/sqlite-store.js");
  return new SqliteGatewayStore(join(dataDir, "gateway.db"), logger ? { logger } : {});
}
