import type { AgentProcess, AgentTurnResult, ProcessPool, TurnFailure } from "./agent-process.js";
import type { EventBus } from "./event-bus.js";
import type { Disposition, GatewayEvent, MessageState } from "./events.js";
import { IdleOutput } from "./idle-output.js";
import { RetryTimers } from "./retry-timers.js";
import { type SettledMessage, Settlements, storedMessage } from "./settlements.js";
import type { GatewayStore, MessageRecord } from "./store.js";
import { TurnEvents } from "./turn-events.js";
import { classifyTurnError, errorText, fallbackText, matchPendingSteers } from "./turn-failure.js";

export interface RouterOptions {
  store: GatewayStore;
  pool: ProcessPool;
  bus: EventBus;
  /** Per turn; a turn that takes longer is ended and its user sees an error. */
  turnTimeoutMs?: number;
  /** Wait before retrying a rate-limited message when the limit names no reset time. */
  rateLimitRetryMs?: number;
  /** A message delivered this many times without an answer is failed on start, not replayed. */
  maxAttempts?: number;
  logger?: (line: string) => void;
  /** A turn of the channel ended: nothing it asked (a permission) can be answered any more. */
  onTurnEnd?: (channelId: string) => void;
}

/** A message delivered while the gateway is not routing (starting, shutting down): 503. */
export class GatewayClosedError extends Error {
  override readonly name = "GatewayClosedError";

  constructor(message = "the gateway is shutting down") {
    super(message);
  }
}

/** What `POST /api/channels/:id/messages` answers. */
export interface Delivery {
  id: string;
  disposition: Disposition;
}

interface ActiveTurn {
  process: AgentProcess;
  oneShot: boolean;
  starter: MessageRecord;
  /** Messages steered into this turn whose `steer()` said `steered`. */
  steered: MessageRecord[];
  /** `steer()` calls not yet settled; the turn's end waits for them. */
  steerCalls: Set<Promise<unknown>>;
  /** Set once `runTurn` settled: later messages wait in the channel's backlog. */
  ended: boolean;
}

interface ChannelState {
  id: string;
  turn: ActiveTurn | null;
  sessionId: string | null;
  /** Messages that arrived while a finished turn was being settled. */
  backlog: MessageRecord[];
}

/**
 * Routes each stored message of a channel to that channel's agent: it steers
 * the turn in flight, starts a turn on the channel's kept process, or runs a
 * one-shot process at the registry's cap. Every outcome is written to the
 * store (answered, failed, deferred with a local fallback reply) and
 * published on the bus. Rate-limited messages are retried after the reset;
 * steers a failed turn left pending are dispatched again; on `start()`,
 * messages a previous run never answered are dispatched again.
 */
export class Router {
  readonly #options: RouterOptions;
  readonly #channels = new Map<string, ChannelState>();
  readonly #work = new Set<Promise<unknown>>();
  readonly #settlements: Settlements;
  readonly #retries = new RetryTimers((channelId) => this.#track(this.#retry(channelId)));
  #closed = false;

  readonly #idleOutput: IdleOutput;

  constructor(options: RouterOptions) {
    this.#options = options;
    this.#settlements = new Settlements(options.store, options.bus);
    this.#idleOutput = new IdleOutput({
      store: options.store,
      bus: options.bus,
      onSession: (channelId, sessionId) =>
        this.#track(this.#rememberSession(this.#channel(channelId), sessionId)),
      track: (work) => this.#track(work),
    });
  }

  /** Loads session ids, replays unanswered messages, re-arms deferred retries. */
  async start(): Promise<void> {
    const { store } = this.#options;
    for (const channel of await store.listChannels()) {
      this.#channel(channel.id).sessionId = channel.sessionId;
    }
    const maxAttempts = this.#options.maxAttempts ?? 5;
    for (const message of await store.listUnanswered()) {
      if (message.attempts >= maxAttempts) {
        await this.#settlements.settle([message], "failed", {
          kind: "error",
          text: `Gave up on this message after ${message.attempts} deliveries without an answer.`,
        });
      } else {
        this.#dispatch(message, false);
      }
    }
    const retryAt = new Map<string, number>();
    for (const message of await store.listDeferred()) {
      const at = message.retryAt ? Date.parse(message.retryAt) : Date.now();
      retryAt.set(message.channelId, Math.max(retryAt.get(message.channelId) ?? 0, at));
    }
    for (const [channelId, at] of retryAt) this.#retries.arm(channelId, at);
  }

  /** Stores the message, then routes it. Resolves once it is stored and its route chosen. */
  async deliver(channelId: string, text: string, source = "http"): Promise<Delivery> {
    if (this.#closed) throw new GatewayClosedError();
    const message = await this.#options.store.insertUserMessage(channelId, text, source);
    return { id: message.id, disposition: this.#dispatch(message, true) };
  }

  /** Resolves when the message is answered or has failed (a deferral is not an end). */
  settled(messageId: string): Promise<SettledMessage> {
    return this.#settlements.settled(messageId);
  }

  /** What a channel's agent said between turns (see `IdleOutput`). */
  acceptIdleLine(channelId: string, line: Record<string, unknown>): void {
    if (!this.#closed) this.#idleOutput.accept(channelId, line);
  }

  inflight(channelId: string): boolean {
    return this.#channels.get(channelId)?.turn != null;
  }

  /**
   * Stops routing. Turns still running are not settled, so their messages
   * stay unanswered in the store and the next start replays them.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#retries.close();
  }

  /** Waits for routing work started so far (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
  }

  #channel(channelId: string): ChannelState {
    let channel = this.#channels.get(channelId);
    if (!channel) {
      channel = {
        id: channelId,
        turn: null,
        sessionId: null,
        backlog: [],
      };
      this.#channels.set(channelId, channel);
    }
    return channel;
  }

  #publish(event: GatewayEvent): void {
    this.#options.bus.publish(event);
  }

  #track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => {
      this.#options.logger?.(`gateway: routing error: ${String(error)}`);
    });
    this.#work.add(tracked);
    void tracked.finally(() => this.#work.delete(tracked));
  }

  /** Chooses the route synchronously (so concurrent messages see each other), then acts. */
  #dispatch(message: MessageRecord, fresh: boolean): Disposition {
    const channel = this.#channel(message.channelId);
    const announce = (disposition: Disposition, state: MessageState) => {
      const current = { ...storedMessage(message), state };
      if (fresh) {
        this.#publish({
          type: "message_received",
          message: current,
          disposition,
          channelId: channel.id,
        });
      } else {
        this.#publish({
          type: "message_state",
          messageId: message.id,
          state,
          channelId: channel.id,
        });
      }
    };
    const retryAt = this.#retries.pendingUntil(channel.id);
    if (retryAt !== null) {
      announce("deferred", "deferred");
      this.#track(this.#defer(channel, [message], new Date(retryAt)));
      return "deferred";
    }
    const active = channel.turn;
    if (active?.ended) {
      // The turn is being settled; this message steers the next one, or starts it.
      announce("steered", "received");
      channel.backlog.push(message);
      return "steered";
    }
    if (active) {
      announce("steered", "steered");
      this.#track(this.#steer(channel, active, message));
      return "steered";
    }
    const kept = this.#options.pool.get(channel.id, channel.sessionId);
    const process = kept ?? this.#options.pool.oneShot(channel.id, channel.sessionId);
    const turn: ActiveTurn = {
      process,
      oneShot: kept === null,
      starter: message,
      steered: [],
      steerCalls: new Set(),
      ended: false,
    };
    channel.turn = turn;
    const disposition = kept ? "started" : "one_shot";
    announce(disposition, "received");
    this.#track(this.#runTurn(channel, turn));
    return disposition;
  }

  async #runTurn(channel: ChannelState, turn: ActiveTurn): Promise<void> {
    const { process, starter } = turn;
    const { pool, store } = this.#options;
    const events = this.#turnEvents(channel);
    this.#publish({ type: "turn_start", prompt: starter.text, channelId: channel.id });
    const running = process.runTurn(starter.text, events.options(this.#options.turnTimeoutMs));
    let result: AgentTurnResult | undefined;
    let failure: TurnFailure | undefined;
    let redispatch: MessageRecord[] = [];
    try {
      await store.setMessageState(starter.id, "received");
      try {
        result = await running;
      } catch (error) {
        failure = classifyTurnError(error);
      }
      this.#options.onTurnEnd?.(channel.id);
      turn.ended = true;
      // A steer that found the turn closing runs as its own turn; no new turn may start
      // on this process before it is done.
      while (turn.steerCalls.size > 0) await Promise.allSettled([...turn.steerCalls]);
      if (turn.oneShot) this.#track(pool.releaseOneShot(process));
      if (this.#closed) return;
      await this.#rememberSession(channel, result?.sessionId ?? process.sessionId);
      redispatch = await this.#finishTurn(channel, turn, result, failure, events);
    } finally {
      turn.ended = true;
      if (channel.turn === turn) channel.turn = null;
      if (!this.#closed) {
        for (const message of [...redispatch, ...channel.backlog.splice(0)]) {
          this.#dispatch(message, false);
        }
      }
    }
  }

  /** Settles what the turn covered; returns the steered messages to dispatch again. */
  async #finishTurn(
    channel: ChannelState,
    turn: ActiveTurn,
    result: AgentTurnResult | undefined,
    failure: TurnFailure | undefined,
    events: TurnEvents,
  ): Promise<MessageRecord[]> {
    const covered = [turn.starter, ...turn.steered];
    if (result) events.ended(result);
    if (result && !result.isError) {
      await this.#settlements.settle(
        covered,
        "answered",
        { kind: "reply", text: result.result },
        { result },
      );
      return [];
    }
    const pending = turn.process.popPendingSteers();
    if (failure?.kind === "rate_limit") {
      const retryAt = failure.resetAt ?? new Date(Date.now() + this.#retryDelay());
      await this.#defer(channel, covered, retryAt);
      return [];
    }
    const redispatch = matchPendingSteers(turn.steered, pending);
    const failed = covered.filter((message) => !redispatch.includes(message));
    const text = result
      ? errorText({ kind: "result", subtype: result.subtype ?? "error", text: result.result })
      : errorText(failure ?? { kind: "crash", message: "unknown failure" });
    await this.#settlements.settle(failed, "failed", { kind: "error", text }, { result });
    return redispatch;
  }

  #turnEvents(channel: ChannelState): TurnEvents {
    return new TurnEvents(
      channel.id,
      (event) => this.#publish(event),
      (sessionId) => this.#track(this.#rememberSession(channel, sessionId)),
    );
  }

  async #steer(channel: ChannelState, turn: ActiveTurn, message: MessageRecord): Promise<void> {
    await this.#options.store.setMessageState(message.id, "steered");
    const events = this.#turnEvents(channel);
    const call = turn.process.steer(message.text, events.options(this.#options.turnTimeoutMs));
    turn.steerCalls.add(call);
    try {
      const outcome = await call;
      if (outcome.status === "steered") {
        turn.steered.push(message);
        return;
      }
      this.#options.onTurnEnd?.(channel.id);
      const result = outcome.turn;
      if (!result || this.#closed) return;
      events.ended(result);
      await this.#rememberSession(channel, result.sessionId);
      if (result.isError) {
        const text = errorText({
          kind: "result",
          subtype: result.subtype ?? "error",
          text: result.result,
        });
        await this.#settlements.settle([message], "failed", { kind: "error", text }, { result });
      } else {
        await this.#settlements.settle(
          [message],
          "answered",
          { kind: "reply", text: result.result },
          { result },
        );
      }
    } catch (error) {
      if (this.#closed) return;
      const failure = classifyTurnError(error);
      if (failure.kind === "rate_limit") {
        await this.#defer(
          channel,
          [message],
          failure.resetAt ?? new Date(Date.now() + this.#retryDelay()),
        );
      } else {
        await this.#settlements.settle([message], "failed", {
          kind: "error",
          text: errorText(failure),
        });
      }
    } finally {
      turn.steerCalls.delete(call);
    }
  }

  #retryDelay(): number {
    return this.#options.rateLimitRetryMs ?? 60_000;
  }

  async #defer(channel: ChannelState, messages: MessageRecord[], retryAt: Date): Promise<void> {
    this.#retries.arm(channel.id, retryAt.getTime());
    await this.#settlements.settle(
      messages,
      "deferred",
      { kind: "fallback", text: fallbackText(retryAt) },
      { retryAt },
    );
  }

  async #retry(channelId: string): Promise<void> {
    if (this.#closed) return;
    const deferred = await this.#options.store.listDeferred();
    for (const message of deferred) {
      if (message.channelId === channelId) this.#dispatch(message, false);
    }
  }

  async #rememberSession(
    channel: ChannelState,
    sessionId: string | null | undefined,
  ): Promise<void> {
    if (!sessionId || sessionId === channel.sessionId) return;
    channel.sessionId = sessionId;
    await this.#options.store.setChannelSession(channel.id, sessionId);
  }
}
