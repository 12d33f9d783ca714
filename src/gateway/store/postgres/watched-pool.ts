import type pg from "pg";
import type { StoreHealth } from "../store-health.js";
import { connectionFailure } from "./connection-failure.js";

/** Clients whose `query` already reports to the health. */
const watchedClients = new WeakSet<pg.PoolClient>();

/**
 * Makes every statement through `pool` report to `health`: one that fails for want of a
 * connection rejects with a `StoreUnavailableError` (the one line an API client gets) and marks
 * the store down; one that succeeds marks it up. Covers `pool.query` and the clients of
 * `pool.connect()` (transactions), which is how every statement of the PostgreSQL store runs.
 * Other failures reject as they are.
 */
export function watchPool(pool: pg.Pool, health: StoreHealth): void {
  const watch = <T>(work: Promise<T>): Promise<T> =>
    work.then(
      (value) => {
        health.reachable();
        return value;
      },
      (error: unknown) => {
        const reason = connectionFailure(error);
        throw reason === null ? error : health.unavailable(reason, error);
      },
    );
  // The callback forms are node-postgres's own (`pool.query` runs on `connect(callback)`): left
  // as they are, as the promise around them reports already.
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = ((...args: unknown[]) =>
    withCallback(args) ? query(...args) : watch(query(...args))) as typeof pool.query;
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient>;
  pool.connect = ((...args: unknown[]) => {
    if (withCallback(args)) return connect(...args);
    return watch(connect()).then((client) => {
      if (!watchedClients.has(client)) {
        watchedClients.add(client);
        const clientQuery = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
        client.query = ((...queryArgs: unknown[]) =>
          withCallback(queryArgs)
            ? clientQuery(...queryArgs)
            : watch(clientQuery(...queryArgs))) as typeof client.query;
      }
      return client;
    });
  }) as typeof pool.connect;
}

function withCallback(args: unknown[]): boolean {
  return typeof args.at(-1) === "function";
}
