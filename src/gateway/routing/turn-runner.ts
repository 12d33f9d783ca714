import type { AgentTurnOptions, AgentTurnResult, TurnFailure } from "../agents/agent-process.js";
import { heldText } from "../budgets/budget-text.js";
import type { GatewayEvent } from "../events.js";
import type { MessageRecord } from "../store/store.js";
import type { AgentStarts } from "./agent-starts.js";
import type { ActiveTurn, ChannelState } from "./channel-state.js";
import type { RouterOptions } from "./router-options.js";
import { withSenderLine } from "./sender-line.js";
import { TurnBudget } from "./turn-budget.js";
import { TurnEvents } from "./turn-events.js";
import { classifyTurnError } from "./turn-failure.js";
import type { TurnSettlement } from "./turn-settlement.js";

/** What a `TurnRunner` is given by its router. */
export interface TurnRunnerOptions {
  router: RouterOptions;
  /** The router's gateway run, in the store's delivery counts. */
  run: string;
  outcomes: TurnSettlement;
  /** Whether the router is closed: a turn that ends then settles nothing. */
  closed: () => boolean;
  /** Work the router waits for (`idle()`) and logs the failure of. */
  track: (work: Promise<unknown>) => void;
  rememberSession: (channel: ChannelState, sessionId: string | null | undefined) => Promise<void>;
  /** Every line the channel's agent writes during a turn (context usage, commands). */
  observe: (channel: ChannelState, line: unknown) => void;
  /** Sees each event of a turn as it is published (what the history keeps of it). */
  record: (event: GatewayEvent) => void;
  /** The channel's turn is over (settled or not): what waited for it goes next. */
  release: (channel: ChannelState) => void;
  /** When a turn that needs a new process may start it (one start per turn of the loop). */
  starts: AgentStarts;
}

/**
 * Runs the router's turns: a message starts one on the channel's kept process (or a one-shot
 * process), later ones steer it while it runs, and what the turn covered is settled once it
 * and its steers are done. The router chooses; this runs what it chose.
 */
export class TurnRunner {
  readonly #options: TurnRunnerOptions;
  /** The messages each early result answered (see `#answerEarly`), gathered as it is handed out. */
  readonly #answeredTogether = new WeakMap<AgentTurnResult, MessageRecord[]>();
  /** Each turn's end, once what it covered is settled (see `#afterTurn`). */
  readonly #turnEnds = new WeakMap<ActiveTurn, { done: Promise<void>; resolve: () => void }>();

  constructor(options: TurnRunnerOptions) {
    this.#options = options;
  }

  /**
   * A turn started by `message` on the channel's kept process, or on a one-shot process when
   * the pool is full (`oneShot`); its delivery is stored before the agent gets it (`handedOver`:
   * stored with the message already).
   */
  open(channel: ChannelState, message: MessageRecord, handedOver = false): ActiveTurn {
    const { pool, store, worktrees, budget, logger } = this.#options.router;
    const acquired = pool.acquire(channel.id, channel.sessionId);
    // The router opens a turn only when the pool has room (`AgentSlots.mustWait`).
    if (acquired === null) throw new Error(`no agent process is free for ${channel.id}`);
    const delivered = handedOver
      ? Promise.resolve()
      : store.setMessageState(message.id, "received", this.#options.run);
    const { process } = acquired;
    const worktree = worktrees?.prepare(channel.id) ?? Promise.resolve(undefined);
    return {
      process,
      oneShot: acquired.oneShot,
      starter: message,
      handedOver: delivered,
      // A process to be started waits for its start's turn (`AgentStarts`), after the message
      // is stored: never in the macrotask that stored it and answers its POST.
      prepared: worktree.then(async (unprepared) => {
        await delivered.catch(() => {});
        if (unprepared === undefined && !process.alive()) await this.#options.starts.next();
        return unprepared;
      }),
      ...(budget ? { budget: new TurnBudget(budget, channel.id, delivered, logger) } : {}),
      steered: [],
      steerCalls: new Set(),
      ended: false,
      answered: new Set(),
      answering: Promise.resolve(),
    };
  }

  /** Runs the channel's turn and settles it; releases the channel on every way out. */
  async run(channel: ChannelState, turn: ActiveTurn): Promise<void> {
    const { process, starter } = turn;
    const events = this.#turnEvents(channel);
    let result: AgentTurnResult | undefined;
    let failure: TurnFailure | undefined;
    let redispatch: MessageRecord[] = [];
    /** The turn's result was settled: its record holds what the turn spent. */
    let settled = false;
    try {
      // Counted as delivered before the agent can read it, so a message that takes the
      // gateway down at once is counted too.
      await turn.handedOver;
      // The handover may have waited out an outage in which the channel went to another worker.
      if (this.#options.closed() || this.#options.router.drives?.(channel.id) === false) return;
      const held = await turn.budget?.admitted;
      if (held) {
        // Past a limit: nothing goes to the agent; the message waits for the reset (or a raise).
        if (turn.oneShot) this.#options.track(this.#options.router.pool.releaseOneShot(process));
        if (!this.#options.closed()) {
          await this.#options.outcomes.defer([starter], held.resetsAt, heldText(held));
        }
        return;
      }
      this.#options.router.bus.publish({
        type: "turn_start",
        prompt: starter.text,
        channelId: channel.id,
      });
      const unprepared = await turn.prepared;
      // Abandoned before its agent started (stopping the channel found nothing running): no
      // agent is asked what nothing here would store.
      if (this.#options.closed() || turn.abandoned) {
        if (turn.oneShot) this.#options.track(this.#options.router.pool.releaseOneShot(process));
        return;
      }
      // Stopped (the page's Stop, a forced removal) before its start: the interrupt found no
      // turn of its agent to reach, so nothing is sent now; its starter ends as stopped.
      const notSent = unprepared === undefined && turn.stopped === true;
      if (unprepared !== undefined) failure = { kind: "crash", message: unprepared };
      else if (!notSent) {
        try {
          result = await process.runTurn(
            withSenderLine(starter),
            this.#turnOptions(channel, turn, events, starter),
          );
        } catch (error) {
          failure = classifyTurnError(error);
        }
      }
      this.#options.router.onTurnEnd?.(channel.id);
      turn.ended = true;
      // A steer that found the turn closing runs as its own turn; no new turn may start
      // on this process before it is done.
      while (turn.steerCalls.size > 0) await Promise.allSettled([...turn.steerCalls]);
      await turn.answering;
      if (turn.oneShot) this.#options.track(this.#options.router.pool.releaseOneShot(process));
      if (this.#options.closed() || turn.abandoned) return;
      await this.#sessionDurable(channel, result?.sessionId ?? process.sessionId);
      redispatch = notSent
        ? await this.#stoppedUnsent(turn)
        : await this.#finishTurn(turn, result, failure, events);
      settled = result !== undefined;
    } finally {
      turn.ended = true;
      this.#turnEnd(turn).resolve();
      if (turn.budget) this.#options.track(turn.budget.end(settled || turn.answered.size > 0));
      if (channel.turn === turn) channel.turn = null;
      channel.backlog.unshift(...redispatch);
      this.#options.release(channel);
    }
  }

  /** Settles what the turn covered; returns the steered messages to dispatch again. */
  async #finishTurn(
    turn: ActiveTurn,
    result: AgentTurnResult | undefined,
    failure: TurnFailure | undefined,
    events: TurnEvents,
  ): Promise<MessageRecord[]> {
    if (result) events.ended(result);
    const open = (message: MessageRecord) => !turn.answered.has(message.id);
    const covered = [turn.starter, ...turn.steered].filter(open);
    if (covered.length === 0) return [];
    return this.#options.outcomes.turn(
      covered,
      turn.steered.filter(open),
      result,
      failure,
      () => turn.process.popPendingSteers(),
      turn.budget?.stopText ?? turn.stopped === true,
    );
  }

  /**
   * A turn stopped before anything was sent to its agent: its starter ends as stopped, and the
   * messages that joined it, never read by any agent, are dispatched again.
   */
  async #stoppedUnsent(turn: ActiveTurn): Promise<MessageRecord[]> {
    await this.#options.outcomes.turn([turn.starter], [], undefined, undefined, () => [], true);
    return turn.steered;
  }

  /**
   * Settles a message of the turn with its own answer at once (see `ActiveTurn.answered`):
   * after the settlements before it, and like a turn's end, once the session is durable.
   */
  #answerEarly(
    channel: ChannelState,
    turn: ActiveTurn,
    events: TurnEvents,
    message: MessageRecord,
    result: AgentTurnResult,
  ): void {
    turn.answered.add(message.id);
    // The messages one result answered are handed over together: one settlement, one reply.
    const group = this.#answeredTogether.get(result);
    if (group !== undefined) {
      group.push(message);
      return;
    }
    const messages = [message];
    this.#answeredTogether.set(result, messages);
    const work = turn.answering.then(async () => {
      if (this.#options.closed() || turn.abandoned) return;
      events.ended(result);
      await this.#sessionDurable(channel, result.sessionId);
      await this.#options.outcomes.result(messages, result);
    });
    // A failed write is logged (tracked); the message stays unanswered in the store, and the
    // next start replays it.
    turn.answering = work.catch(() => {});
    this.#options.track(work);
  }

  /** The turn's end (settled, or given up): made on first use. */
  #turnEnd(turn: ActiveTurn): { done: Promise<void>; resolve: () => void } {
    let end = this.#turnEnds.get(turn);
    if (end === undefined) {
      let resolve = () => {};
      const done = new Promise<void>((settle) => {
        resolve = settle;
      });
      end = { done, resolve };
      this.#turnEnds.set(turn, end);
    }
    return end;
  }

  /** What must hold before an answer is stored: the session noted, and its transcript stored. */
  async #sessionDurable(
    channel: ChannelState,
    sessionId: string | null | undefined,
  ): Promise<void> {
    await this.#options.rememberSession(channel, sessionId);
    await this.#options.router.beforeAnswer?.(channel.id, channel.sessionId);
  }

  #turnEvents(channel: ChannelState): TurnEvents {
    return new TurnEvents(
      channel.id,
      (event) => {
        this.#options.record(event);
        this.#options.router.bus.publish(event);
      },
      (sessionId) => this.#options.track(this.#options.rememberSession(channel, sessionId)),
      (line) => this.#options.observe(channel, line),
      this.#options.router.logger,
    );
  }

  /**
   * The turn's options for the process: the agent starting on `message` counts an attempt, and
   * its own answer before the turn ends settles it at once.
   */
  #turnOptions(
    channel: ChannelState,
    turn: ActiveTurn,
    events: TurnEvents,
    message: MessageRecord,
  ): AgentTurnOptions {
    const { store, turnTimeoutMs } = this.#options.router;
    const options = events.options(turnTimeoutMs);
    const { budget, process } = turn;
    return {
      ...options,
      ...(budget === undefined
        ? {}
        : {
            onEvent: (line) => {
              options.onEvent?.(line);
              budget.observe(line, process);
            },
          }),
      onStarted: () => this.#options.track(store.countStarted(message.id, this.#options.run)),
      onAnswered: (result) => this.#answerEarly(channel, turn, events, message, result),
      images: (message.attachments ?? []).filter((attachment) => attachment.kind === "image"),
    };
  }

  /**
   * Counted in the turn's `steerCalls` at once, before any wait, until all of it is done (its
   * own turn settled too): else the turn could end and the next start on this process while
   * this steer is on its way, which then finds a turn in flight.
   */
  steer(channel: ChannelState, turn: ActiveTurn, message: MessageRecord): Promise<void> {
    const work = this.#steerOnce(channel, turn, message);
    turn.steerCalls.add(work);
    const done = () => {
      turn.steerCalls.delete(work);
    };
    work.then(done, done);
    return work;
  }

  /**
   * Waits, when the turn's process is not running (it died: the steer runs as a turn of its own
   * on a new one), for a start's turn (`AgentStarts`), behind the steers before it that wait.
   */
  async #startTurnOf(turn: ActiveTurn): Promise<void> {
    const before = turn.steerStart;
    if (before === undefined && turn.process.alive()) return;
    const start = (async () => {
      await before;
      if (!turn.process.alive()) await this.#options.starts.next();
    })();
    turn.steerStart = start;
    await start;
    if (turn.steerStart === start) turn.steerStart = undefined;
  }

  async #steerOnce(channel: ChannelState, turn: ActiveTurn, message: MessageRecord): Promise<void> {
    const events = this.#turnEvents(channel);
    await turn.handedOver;
    // The turn it would join is held by a budget: so is this message.
    const held = await turn.budget?.admitted;
    if (held) {
      if (!this.#options.closed()) {
        await this.#options.outcomes.defer([message], held.resetsAt, heldText(held));
      }
      return;
    }
    const unprepared = await turn.prepared;
    if (unprepared !== undefined) {
      if (!this.#options.closed() && !turn.abandoned) {
        await this.#options.outcomes.failure([message], { kind: "crash", message: unprepared });
      }
      return;
    }
    await this.#options.router.store.setMessageState(message.id, "steered", this.#options.run);
    await this.#startTurnOf(turn);
    if (this.#options.closed()) return;
    if (turn.stopped === true && !turn.process.alive()) {
      // Its turn was stopped before its agent started: it starts none; it goes again after.
      turn.steered.push(message);
      return;
    }
    try {
      const outcome = await turn.process.steer(
        withSenderLine(message),
        this.#turnOptions(channel, turn, events, message),
      );
      if (outcome.status === "steered") {
        turn.steered.push(message);
        return;
      }
      this.#options.router.onTurnEnd?.(channel.id);
      const result = outcome.turn;
      if (!result || this.#options.closed() || turn.abandoned) return;
      // Answered by a result of its own already; what came after was for later messages.
      if (turn.answered.has(message.id)) return;
      // It ran as a turn of its own after the turn it missed, whose end waits for this call:
      // its answer is stored after that turn's (the process is free now, so that wait is not
      // counted in `steerCalls`).
      this.#options.track(
        this.#turnEnd(turn).done.then(async () => {
          if (this.#options.closed() || turn.abandoned) return;
          events.ended(result);
          await this.#sessionDurable(channel, result.sessionId);
          await this.#options.outcomes.result([message], result);
        }),
      );
    } catch (error) {
      if (!this.#options.closed() && !turn.abandoned) {
        await this.#options.outcomes.failure([message], classifyTurnError(error));
      }
    }
  }
}
