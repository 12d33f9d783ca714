/**
 * The fourth step of `startGateway`: the router, on a shared store the ownership of channels
 * (leases) that decides which worker drives each, and the scheduler. Nothing starts here; the
 * sources step starts them.
 */
import { hookProblemOf } from "../agents/stream-json-events.js";
import { BudgetGuard } from "../budgets/budget-guard.js";
import { channelSpend } from "../budgets/spend-report.js";
import { ChannelOwnership } from "../cluster/channel-ownership.js";
import { watchForwarded } from "../cluster/forwarded-outcome.js";
import { sessionAfterTakeover } from "../cluster/session-takeover.js";
import type { GatewayOptions } from "../gateway-options.js";
import { Router } from "../routing/router.js";
import { Scheduler } from "../scheduler/scheduler.js";
import { sessionIdOf } from "../transcripts/transcript-mirror.js";
import type { AgentRuntime } from "./agent-runtime.js";
import type { EventFlow } from "./event-flow.js";
import type { GatewayStorage } from "./open-storage.js";

export interface GatewayRouting {
  router: Router;
  budget: BudgetGuard;
  ownership: ChannelOwnership | undefined;
  scheduler: Scheduler;
}

export function createGatewayRouting(
  options: GatewayOptions,
  { store, shared }: GatewayStorage,
  { bus, patient }: EventFlow,
  { worker, permissions, pool, mirror, info, worktrees, bindings, sentFiles }: AgentRuntime,
  log: (line: string) => void,
): GatewayRouting {
  let ownership: ChannelOwnership | undefined;
  const budget = new BudgetGuard({
    // Its spend entries are writes that finish a turn: held through an outage like the rest.
    store: patient?.store ?? store,
    bindings,
    logger: log,
    ...(options.priceUsage ? { price: options.priceUsage } : {}),
    ...(options.clock ? { now: options.clock } : {}),
  });
  const router = new Router({
    store: patient?.store ?? store,
    pool,
    bus,
    budget,
    logger: log,
    facts: {
      info,
      worktree: (channelId) => worktrees.status(channelId),
      spend: (channelId) => channelSpend(budget, channelId),
    },
    worktrees,
    sentFiles,
    ...(shared
      ? {
          claimChannel: (channelId: string) => ownership!.claim(channelId),
          drives: (channelId: string) => ownership!.holds(channelId),
        }
      : {}),
    onTurnEnd: (channelId) =>
      permissions.expire(channelId, "the turn ended before anyone answered"),
    onAgentOutput: (channelId: string, line: unknown) => {
      // A hook that failed is also an event on the channel (`hook_warning`); the log says it once.
      const hook = hookProblemOf(line);
      if (hook !== undefined)
        log(`gateway: channel ${channelId}: ${hook.event} hook: ${hook.message}`);
      mirror?.noteOutput(channelId, sessionIdOf(line));
    },
    ...(mirror
      ? {
          beforeAnswer: (channelId: string, sessionId: string | null) =>
            mirror.flush(channelId, sessionId ?? undefined),
        }
      : {}),
    ...(options.turnTimeoutMs ? { turnTimeoutMs: options.turnTimeoutMs } : {}),
    ...(options.rateLimitRetryMs ? { rateLimitRetryMs: options.rateLimitRetryMs } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    ...(options.maxDeliveries ? { maxDeliveries: options.maxDeliveries } : {}),
  });
  ownership = shared
    ? new ChannelOwnership({
        store: shared,
        router,
        worker,
        leaseSeconds: options.leaseSeconds ?? 15,
        stopChannel: (channelId) => pool.stop(channelId),
        watchForwarded: (channelId) => watchForwarded(bus, channelId),
        ...(mirror
          ? {
              resumeSession: (channelId: string, sessionId: string | null) =>
                sessionAfterTakeover({ store, mirror, bus, logger: log }, channelId, sessionId),
            }
          : {}),
        logger: log,
      })
    : undefined;
  // Back from an outage: every lease is re-validated before anything is acted on again.
  if (shared && ownership) shared.health.onRestored(() => ownership!.revalidate());
  // A raised limit (or any change of the budgets) lets the messages they hold go on.
  bindings.onChange(() => router.budgetsChanged());
  const scheduler = new Scheduler({
    store,
    router,
    budget,
    bus,
    logger: log,
    ...(shared && ownership
      ? {
          cluster: {
            deliver: (channelId: string, text: string, source: string) =>
              ownership!.deliver(channelId, text, source),
            claimFiring: (id: string, dueAt: string, next: string | null, now: Date) =>
              shared.claimFiring(id, dueAt, next, now),
            announce: (id: string) => shared.announceSchedule(id),
          },
        }
      : {}),
  });
  // Then, firings due while it was away fire once (each claimed, so once across workers).
  shared?.health.onRestored(() => scheduler.fireMissed());
  return { router, budget, ownership, scheduler };
}
