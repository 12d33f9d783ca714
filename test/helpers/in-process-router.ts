/**
 * A gateway Router in the test's own process, started over a store and a pool, with the
 * teardown such tests share: the router closed, the pool's agents stopped, the last turn
 * settled, the store closed and the test's folder removed, in that order.
 */
import { rmSync } from "node:fs";
import { Router } from "../../src/gateway/routing/router.js";
import type { RouterOptions } from "../../src/gateway/routing/router-options.js";

export async function startInProcessRouter(
  options: RouterOptions,
  root: string,
): Promise<{ router: Router; close: () => Promise<void> }> {
  const router = new Router(options);
  await router.start();
  const close = async (): Promise<void> => {
    await router.close();
    await options.pool.stopAll();
    await router.idle();
    await options.store.close();
    rmSync(root, { recursive: true, force: true });
  };
  return { router, close };
}
