import type { GatewayEvent } from "../events.js";
import type { SharedStore } from "./shared-store.js";
import type { GatewayStore, Settlement, SpendEntry } from "./store.js";
import type { StoreHealth } from "./store-health.js";
import { isStoreUnavailable } from "./store-unavailable-error.js";

/**
 * The writes that finish what was accepted before: how a turn ended, a message's state, the
 * channel's session and context, what the agent said between turns. Not `insertUserMessage`:
 * a new message is refused while the store is down (its client gets the 503 and sends again).
 * Each is named as a log line names it.
 */
const HELD_WRITES: Record<string, (...args: never[]) => string> = {
  settle: (settlement: Settlement) => {
    const what = { reply: "answer", error: "error reply", fallback: "deferral" }[
      settlement.reply.kind as string
    ];
    const ids = settlement.messageIds.join(", ");
    return `the ${what ?? `${settlement.reply.kind} notice`} to ${settlement.messageIds.length > 1 ? "messages" : "message"} ${ids}`;
  },
  setMessageState: (messageId: string, state: string) =>
    `the state of message ${messageId} (${state})`,
  setChannelSession: (channelId: string) => `the session of channel ${channelId}`,
  setChannelContext: (channelId: string) => `the context usage of channel ${channelId}`,
  insertAgentMessage: (channelId: string) => `what the agent of channel ${channelId} said`,
  insertSystemMessage: (channelId: string) => `a notice in channel ${channelId}`,
  putSpend: (entry: SpendEntry) => `the spend of channel ${entry.channelId} (${entry.kind})`,
  deleteSpend: (entryId: string) => `the spend entry ${entryId}, held by its turn now`,
};

/**
 * A channel's progress events (text as it is written, tool calls, states): held through an
 * outage too, so that every worker's streams get them in order, before the reply, once it is
 * back. Not named among the writes a shutdown waits for (they are only progress), and dropped
 * instead of stored if, back from the outage, this worker no longer drives their channel:
 * another worker took it meanwhile, and streams its own turn.
 */
const HELD_EVENTS = "appendEvents";

/** The store the router writes through, and the held writes not done yet. */
export interface PatientWrites<Store extends GatewayStore> {
  store: Store;
  /** The held writes still to be done (waiting for the store, or on their way), named; not events. */
  pending(): string[];
  /** Resolves with true once none is pending, or false when `signal` aborts first. */
  drained(signal: AbortSignal): Promise<boolean>;
}

/**
 * The store as the router writes through it when the database may go away: a held write (see
 * `HELD_WRITES`) that finds the store unavailable waits in memory until it is back, and its
 * worker's leases re-validated (`StoreHealth.whenUp`), then runs again, as often as it takes.
 * So a turn that ends during an outage keeps its answer, stored once the database returns;
 * `settle` then refuses it if another worker took the channel meanwhile (that worker replays
 * the message), and answers nothing twice either way. A channel's events wait likewise (see
 * `HELD_EVENTS`). Everything else runs as it is.
 *
 * Once `signal` aborts (the gateway closing, after it waited for what `pending` names), a
 * waiting write gives up with the store's error: what it held is not written and its messages
 * stay unanswered for the next owner to replay.
 */
export function patientWrites<Store extends GatewayStore & Partial<SharedStore>>(
  store: Store,
  health: StoreHealth,
  signal: AbortSignal,
  /** Whether this worker drives the channel (false: another worker took it). */
  drives: (channelId: string) => boolean = () => true,
): PatientWrites<Store> {
  /** Named when asked (`pending`), not on every write. */
  const pending = new Set<{ name: () => string }>();
  let onDrained: Array<() => void> = [];
  /** Runs `write` until it finds the store up, or until `moot()` says it is no longer wanted. */
  const retried = async (write: () => Promise<unknown>, moot = () => false) => {
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!isStoreUnavailable(error) || signal.aborted) throw error;
        await health.whenUp(signal);
        if (signal.aborted) throw error;
        if (moot()) return undefined;
      }
    }
  };
  const patient = async (name: () => string, write: () => Promise<unknown>): Promise<unknown> => {
    const entry = { name };
    pending.add(entry);
    try {
      return await retried(write);
    } finally {
      pending.delete(entry);
      if (pending.size === 0) for (const resolve of onDrained.splice(0)) resolve();
    }
  };
  /** Each method's wrapper, made once (the router calls a few of them for every message). */
  const wrappers = new Map<string | symbol, unknown>();
  const wrap = (property: string | symbol, value: unknown): unknown => {
    const method = (value as (...args: unknown[]) => Promise<unknown>).bind(store);
    if (property === HELD_EVENTS) {
      return (events: GatewayEvent[]) => {
        let left = events;
        return retried(
          () => method(left),
          () => {
            left = left.filter((event) => drives(event.channelId));
            return left.length === 0;
          },
        ).then((ids) => ids ?? []);
      };
    }
    const describe = typeof property === "string" ? HELD_WRITES[property] : undefined;
    if (describe === undefined) return method;
    return (...args: unknown[]) =>
      patient(
        () => (describe as (...args: unknown[]) => string)(...args),
        () => method(...args),
      );
  };
  const proxy = new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      let wrapper = wrappers.get(property);
      if (wrapper === undefined) {
        wrapper = wrap(property, value);
        wrappers.set(property, wrapper);
      }
      return wrapper;
    },
  });
  return {
    store: proxy,
    pending: () => [...pending].map((entry) => entry.name()),
    drained(until) {
      if (pending.size === 0) return Promise.resolve(true);
      if (until.aborted) return Promise.resolve(false);
      return new Promise((resolve) => {
        const done = () => {
          until.removeEventListener("abort", aborted);
          resolve(true);
        };
        const aborted = () => {
          onDrained = onDrained.filter((each) => each !== done);
          resolve(false);
        };
        onDrained.push(done);
        until.addEventListener("abort", aborted, { once: true });
      });
    },
  };
}
