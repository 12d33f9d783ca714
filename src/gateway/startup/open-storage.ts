/**
 * The first step of `startGateway`: the data folder made private, the store (`gateway.db`
 * under `dataDir`, or PostgreSQL), the token (`<dataDir>/token`; with PostgreSQL the store's,
 * shared by every worker) and, on a shared store, the name of its event stream. A failure
 * after the store opened closes it.
 */
import type { GatewayOptions } from "../gateway-options.js";
import { gatewayToken } from "../http/auth-token.js";
import { openStore } from "../store/open-store.js";
import { makeDataFolderPrivate } from "../store/private-data-folder.js";
import { isSharedStore, type SharedStore } from "../store/shared-store.js";
import type { GatewayStore } from "../store/store.js";

export interface GatewayStorage {
  store: GatewayStore;
  /** The same store when it is shared by several workers (PostgreSQL). */
  shared: SharedStore | undefined;
  token: string;
  sharedName: string | undefined;
}

export async function openStorage(
  options: GatewayOptions,
  log: (line: string) => void,
): Promise<GatewayStorage> {
  makeDataFolderPrivate(options.dataDir, log);
  const store = await openStore(options.store ?? { kind: "sqlite" }, options.dataDir, log);
  const token = await gatewayToken(options.dataDir, store).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const shared = isSharedStore(store) ? store : undefined;
  const sharedName = await shared?.eventStreamName().catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  return { store, shared, token, sharedName };
}
