import type { Context } from "hono";
import type { StoreStatus } from "../store/store-health.js";
import { SHUTDOWN_RETRY_AFTER_SECONDS, shuttingDownReason } from "./shutting-down.js";

export interface HealthInfo {
  /** False while the store cannot be reached or the worker shuts down (then a 503; see below). */
  ok: boolean;
  version: string;
  engine: string;
  demo: boolean;
  hint?: string;
  /** With a store several workers share: this worker's name. */
  worker?: string;
  /** With a networked store: whether this worker reaches it now. */
  store?: StoreStatus;
}

export interface HealthRouteOptions {
  health: HealthInfo;
  /** With a networked store: whether it can be reached now (see `StoreHealth`). */
  storeStatus?: () => StoreStatus;
  /** Aborted when the gateway begins to shut down. */
  closing: AbortSignal;
  /** Whether it accepts messages yet (until then its health is a 503 "starting"); default yes. */
  accepting?: () => boolean;
}

/**
 * `GET /api/health` (no token), for a person and for a load balancer's health check: 200 with
 * what the gateway is; a 503 with `ok: false`, the reason and `Retry-After` while this worker
 * should get no traffic: until it accepts messages (it listens a little earlier, while it
 * starts its sources and takes its channels), from the start of a shutdown (send through
 * another worker), and while its store cannot be reached (`Retry-After`: the next reconnect,
 * at most).
 */
export function healthRoute({
  health,
  storeStatus,
  closing,
  accepting = () => true,
}: HealthRouteOptions): (context: Context) => Response {
  const shuttingDown = shuttingDownReason(health.worker);
  const starting =
    health.worker === undefined
      ? "the gateway is starting; send again in a moment"
      : `worker ${health.worker} is starting; send again in a moment`;
  return (context) => {
    const store = storeStatus?.();
    if (closing.aborted || !accepting()) {
      context.header("retry-after", String(SHUTDOWN_RETRY_AFTER_SECONDS));
      const answer = { ...health, ok: false, ...(store ? { store } : {}) };
      return context.json({ ...answer, error: closing.aborted ? shuttingDown : starting }, 503);
    }
    if (store === undefined) return context.json(health);
    if (store.ok) return context.json({ ...health, ok: true, store });
    context.header("retry-after", String(store.retryAfterSeconds ?? 1));
    return context.json({ ...health, ok: false, store }, 503);
  };
}
