import type { ProcessPool } from "../agents/agent-process.js";
import type { ChannelFacts } from "../bindings/channel-status.js";
import type { BudgetGuard } from "../budgets/budget-guard.js";
import type { EventBus } from "../event-bus.js";
import type { Disposition } from "../events.js";
import type { GatewayStore } from "../store/store.js";
import type { ChannelWorktrees } from "../worktrees/channel-worktrees.js";
import type { TurnFiles } from "./settlements.js";

/** What a `Router` is given: where messages and processes come from, and its limits. */
export interface RouterOptions {
  store: GatewayStore;
  pool: ProcessPool;
  bus: EventBus;
  /**
   * The channels' worktrees (bindings with `"isolation": "worktree"`): made before a channel's
   * first turn, removed by its reset.
   */
  worktrees?: ChannelWorktrees | undefined;
  /**
   * The gateway's budgets: a turn past a limit is held before it starts (its messages deferred
   * to the reset) and stopped at its next model call when it crosses one.
   */
  budget?: BudgetGuard;
  /** Per turn; a turn that takes longer is ended and its user sees an error. */
  turnTimeoutMs?: number;
  /** Wait before retrying a rate-limited message when the limit names no reset time. */
  rateLimitRetryMs?: number;
  /**
   * An unanswered message is failed on start, not replayed, once agents started on it in this
   * many gateway runs (default 5), or once this many runs handed it over (default 20); see
   * `DeliveryCaps`.
   */
  maxAttempts?: number;
  maxDeliveries?: number;
  logger?: (line: string) => void;
  /** What `/status` and `/model` read and change (the bindings); without it they are refused. */
  facts?: ChannelFacts;
  /** A turn of the channel ended: nothing it asked (a permission) can be answered any more. */
  onTurnEnd?: (channelId: string) => void;
  /**
   * With several workers on one store: whether this worker may drive the channel (it holds or
   * took the channel's lease). `start()` replays and re-arms only the channels it may drive.
   */
  claimChannel?: (channelId: string) => Promise<boolean>;
  /**
   * With several workers: whether this worker drives the channel now. A message of a channel
   * it does not (it lost the lease) is left in the store for the channel's owner.
   */
  drives?: (channelId: string) => boolean;
  /** Every line the channel's agent writes (turn or idle): its session file may have grown. */
  onAgentOutput?: (channelId: string, line: unknown) => void;
  /**
   * Awaited after a turn ends and before its answer is stored: what must be durable before the
   * message counts as answered (the session's transcript, on a store several workers share).
   */
  beforeAnswer?: (channelId: string, sessionId: string | null) => Promise<void>;
  /** The files agents send (`send_file`), followed in their turns and kept with the reply. */
  sentFiles?: TurnFiles;
}

/** What `POST /api/channels/:id/messages` answers. */
export interface Delivery {
  id: string;
  disposition: Disposition;
}
