import type { AgentProcess } from "../agents/agent-process.js";
import { ContextUsageTracker } from "../agents/context-usage.js";
import type { MessageRecord } from "../store/store.js";
import { CommandQueue } from "./command-queue.js";
import type { TurnBudget } from "./turn-budget.js";

/** A turn the router runs on a channel's process. */
export interface ActiveTurn {
  process: AgentProcess;
  oneShot: boolean;
  starter: MessageRecord;
  /** The starter's delivery, stored before the agent gets it; steers wait for it too. */
  handedOver: Promise<void>;
  /**
   * The channel's worktree made (when its binding asks for one) before the agent starts: why it
   * could not be, or undefined. Steers wait for it too.
   */
  prepared: Promise<string | undefined>;
  /** Messages steered into this turn whose `steer()` said `steered`. */
  steered: MessageRecord[];
  /** `steer()` calls not yet settled; the turn's end waits for them. */
  steerCalls: Set<Promise<unknown>>;
  /**
   * The last steer's wait for its start (its process was not running, see `AgentStarts`), while
   * it waits: a later steer waits behind it, so steers reach the agent in the order they came.
   */
  steerStart?: Promise<void> | undefined;
  /** Set once `runTurn` settled: later messages wait in the channel's backlog. */
  ended: boolean;
  /**
   * Messages of the turn answered by a result of their own before the turn ended (their ids),
   * settled at once so a gateway killed later does not run them again; the turn's end settles
   * the rest.
   */
  answered: Set<string>;
  /** Those settlements, in order; the turn's end waits for them. */
  answering: Promise<void>;
  /** Its budget, when the gateway has budgets: checked before it starts, metered as it runs. */
  budget?: TurnBudget;
  /** Interrupted on request (`Router.interrupt`): its failure is reported as stopped. */
  stopped?: boolean;
  /** Stopped as its lease ran out (see `Router.abandon`): what it covered is left unanswered. */
  abandoned?: boolean;
}

/** What the router knows of one channel. */
export interface ChannelState {
  id: string;
  turn: ActiveTurn | null;
  sessionId: string | null;
  /** Messages that arrived while a finished turn was being settled, or a command ran. */
  backlog: MessageRecord[];
  /** `/compact` and `/clear`, which wait for the agent to be idle and run alone. */
  commands: CommandQueue;
  context: ContextUsageTracker;
}

/** A channel the router has not seen yet: idle, no session, nothing waiting. */
export function newChannelState(id: string): ChannelState {
  return {
    id,
    turn: null,
    sessionId: null,
    backlog: [],
    commands: new CommandQueue(),
    context: new ContextUsageTracker(),
  };
}
