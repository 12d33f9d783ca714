/**
 * A cluster worker in the test's own process: what `startGateway` assembles on a shared store
 * (a pool of fake agents, a Router, the ChannelOwnership that claims its channels), without its
 * HTTP server, started, with the teardown such tests share: the router closed, the pool's
 * agents stopped, the last turn settled, the leases given up, the store closed, in that order.
 */
import { RegistryProcessPool } from "../../src/gateway/agents/process-pool.js";
import { ChannelOwnership } from "../../src/gateway/cluster/channel-ownership.js";
import { EventBus } from "../../src/gateway/event-bus.js";
import { Router } from "../../src/gateway/routing/router.js";
import type { SharedStore } from "../../src/gateway/store/shared-store.js";
import { FAKE_CLAUDE } from "./fixtures.js";

export interface InProcessWorker {
  router: Router;
  ownership: ChannelOwnership;
  close(): Promise<void>;
}

export async function startInProcessWorker(options: {
  /** The store the worker uses (it may wrap the one it closes, `closes`). */
  store: SharedStore;
  closes: { close(): Promise<void> };
  worker: string;
  leaseSeconds: number;
  logger?: (line: string) => void;
}): Promise<InProcessWorker> {
  const { store, worker, leaseSeconds } = options;
  const logger = options.logger ?? (() => {});
  const pool = new RegistryProcessPool({
    maxLive: 2,
    idleMinutes: 1,
    processOptions: { claudeBin: FAKE_CLAUDE },
    logger,
  });
  let ownership: ChannelOwnership | undefined;
  const router = new Router({
    store,
    pool,
    bus: new EventBus(),
    ...(options.logger ? { logger } : {}),
    claimChannel: (channelId) => ownership!.claim(channelId),
    drives: (channelId) => ownership!.holds(channelId),
  });
  ownership = new ChannelOwnership({
    store,
    router,
    worker,
    leaseSeconds,
    stopChannel: (channelId) => pool.stop(channelId),
    ...(options.logger ? { logger } : {}),
  });
  await ownership.start();
  await router.start();
  const started = ownership;
  return {
    router,
    ownership: started,
    close: async () => {
      await router.close();
      await pool.stopAll();
      await router.idle();
      await started.stop();
      await options.closes.close();
    },
  };
}
