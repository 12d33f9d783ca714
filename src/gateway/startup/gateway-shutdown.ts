/**
 * How a started gateway stops, in the order that loses nothing: take nothing new, stop the
 * sources, the router and the agents, wait (bounded) for answers held through an outage, then
 * give up the channels, the feeds, the server and the store. The first call does it; every
 * call returns the same promise.
 */
import type { ChannelSource } from "../channel-source.js";
import { waitForHeldWrites } from "../store/held-writes-at-shutdown.js";
import type { AgentRuntime } from "./agent-runtime.js";
import type { EventFlow } from "./event-flow.js";
import type { GatewayRouting } from "./gateway-routing.js";
import type { HttpServer } from "./listen-http.js";
import type { GatewayStorage } from "./open-storage.js";

/** The feeds from other workers opened once the sources start (see `startSources`). */
export interface LateFeeds {
  schedules?: { close(): Promise<void> };
  permissions?: { close(): Promise<void> };
}

export interface ShutdownParts {
  storage: GatewayStorage;
  flow: EventFlow;
  runtime: AgentRuntime;
  routing: GatewayRouting;
  sources: ChannelSource[];
  server: HttpServer;
  closing: AbortController;
  feeds: LateFeeds;
  shutdownWaitMs: number;
  log: (line: string) => void;
}

export function gatewayShutdown(parts: ShutdownParts): () => Promise<void> {
  const { storage, flow, runtime, routing, sources, server, closing, feeds, log } = parts;
  const { store } = storage;
  const health = store.health;
  const { ownership, scheduler, router } = routing;
  let closed: Promise<void> | undefined;
  return () => {
    closed ??= (async () => {
      // From now on this worker takes no channel (another worker does) and routes nothing new.
      ownership?.quiesce();
      closing.abort();
      await feeds.schedules?.close();
      await feeds.permissions?.close();
      await scheduler.stop();
      await Promise.allSettled(sources.map((source) => source.stop()));
      await router.close();
      runtime.permissions.close();
      await runtime.pool.stopAll();
      await runtime.spawner?.close();
      if (health && flow.patient) {
        // Renewing what it holds, taking nothing new, while the answers it holds are stored.
        await waitForHeldWrites({
          writes: flow.patient,
          storeUp: () => health.up,
          waitMs: parts.shutdownWaitMs,
          logger: log,
        });
      }
      flow.holding.abort();
      await router.idle();
      await runtime.mirror?.close();
      await runtime.pruning?.stop();
      // Only once nothing runs here: another worker may take the channels at once.
      await ownership?.stop();
      await flow.eventFeed?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ("closeAllConnections" in server) server.closeAllConnections();
      });
      await store.close();
      log("gateway: stopped");
    })();
    return closed;
  };
}
