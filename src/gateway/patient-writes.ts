import type { GatewayStore } from "./store/store.js";
import type { StoreHealth } from "./store/store-health.js";
import { isStoreUnavailable } from "./store/store-unavailable-error.js";

/**
 * The writes that finish what was accepted before: how a turn ended, a message's state, the
 * channel's session and context, what the agent said between turns. Not `insertUserMessage`:
 * a new message is refused while the store is down (its client gets the 503 and sends again).
 */
const HELD_WRITES = new Set<PropertyKey>([
  "settle",
  "setMessageState",
  "setChannelSession",
  "setChannelContext",
  "insertAgentMessage",
  "insertSystemMessage",
]);

/**
 * The store as the router writes through it when the database may go away: a held write (see
 * `HELD_WRITES`) that finds the store unavailable waits in memory until it is back, and its
 * worker's leases re-validated (`StoreHealth.whenUp`), then runs again, as often as it takes.
 * So a turn that ends during an outage keeps its answer, stored once the database returns;
 * `settle` then refuses it if another worker took the channel meanwhile (that worker replays
 * the message), and answers nothing twice either way. Everything else runs as it is.
 *
 * Once `signal` aborts (the gateway closing), a waiting write gives up with the store's error:
 * what it held is not written and its messages stay unanswered for the next start to replay.
 */
export function patientWrites<Store extends GatewayStore>(
  store: Store,
  health: StoreHealth,
  signal: AbortSignal,
): Store {
  const patient = async (write: () => Promise<unknown>): Promise<unknown> => {
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!isStoreUnavailable(error) || signal.aborted) throw error;
        await health.whenUp(signal);
      }
    }
  };
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = value.bind(target) as (...args: unknown[]) => Promise<unknown>;
      if (!HELD_WRITES.has(property)) return method;
      return (...args: unknown[]) => patient(() => method(...args));
    },
  });
}
