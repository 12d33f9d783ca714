import { randomUUID } from "node:crypto";
import { ContextUsageTracker } from "../agents/context-usage.js";
import { IdleOutput } from "../agents/idle-output.js";
import { type ChannelCommand, parseChannelCommand } from "../channel-command.js";
import type { Disposition, GatewayEvent, MessageState } from "../events.js";
import { GatewayClosedError } from "../gateway-closed-error.js";
import type { MessageRecord } from "../store/store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";
import { AgentSlots } from "./agent-slots.js";
import { ChannelCommands, type CommandOutcome } from "./channel-commands.js";
import { type ChannelState, newChannelState } from "./channel-state.js";
import { defaultDeliveryCaps, leftoverWork } from "./leftover-work.js";
import { RetryTimers } from "./retry-timers.js";
import { routedEvent } from "./routed-event.js";
import { RoutedMessages } from "./routed-messages.js";
import type { Delivery, RouterOptions } from "./router-options.js";
import { type SettledMessage, Settlements } from "./settlements.js";
import { TurnRunner } from "./turn-runner.js";
import { TurnSettlement } from "./turn-settlement.js";

export type { Delivery, RouterOptions };
export { GatewayClosedError };

/**
 * Routes each stored message of a channel to that channel's agent: it steers
 * the turn in flight, starts a turn on the channel's kept process, or runs a
 * one-shot process at the registry's cap; at the pool's cap on all processes it waits, in
 * order, for one to be free (`AgentSlots`). Every outcome is written to the
 * store (answered, failed, deferred with a local fallback reply) and
 * published on the bus. Rate-limited messages are retried after the reset;
 * steers a failed turn left pending are dispatched again; on `start()`,
 * messages a previous run never answered are dispatched again. It chooses each message's
 * route; a `TurnRunner` runs the turns and steers it chose.
 */
export class Router {
  readonly #options: RouterOptions;
  readonly #channels = new Map<string, ChannelState>();
  readonly #work = new Set<Promise<unknown>>();
  readonly #settlements: Settlements;
  readonly #retries = new RetryTimers((channelId) => this.#track(this.#retry(channelId)));
  readonly #routed = new RoutedMessages();
  /** Channels with messages being stored by `deliver`, and how many. */
  readonly #storing = new Map<string, number>();
  /** This gateway run, in the store's delivery counts: each run counts a message once. */
  readonly #run = randomUUID();
  #closed = false;

  readonly #idleOutput: IdleOutput;
  readonly #commands: ChannelCommands;
  readonly #outcomes: TurnSettlement;
  readonly #turns: TurnRunner;
  readonly #slots: AgentSlots;

  constructor(options: RouterOptions) {
    this.#options = options;
    this.#slots = new AgentSlots({
      pool: options.pool,
      evictable: (channelId) => {
        const channel = this.#channels.get(channelId);
        if (channel === undefined) return true;
        return channel.turn === null && !channel.commands.busy && channel.backlog.length === 0;
      },
      admit: (channel) => this.#release(channel),
    });
    this.#settlements = new Settlements(options.store, options.bus);
    this.#outcomes = new TurnSettlement(
      this.#settlements,
      this.#retries,
      options.rateLimitRetryMs ?? 60_000,
    );
    this.#turns = new TurnRunner({
      router: options,
      run: this.#run,
      outcomes: this.#outcomes,
      closed: () => this.#closed,
      track: (work) => this.#track(work),
      rememberSession: (channel, sessionId) => this.#rememberSession(channel, sessionId),
      observe: (channel, line) => this.#observe(channel, line),
      release: (channel) => this.#release(channel),
    });
    const onSession = (channelId: string, sessionId: string) =>
      this.#track(this.#rememberSession(this.#channel(channelId), sessionId));
    const { store, pool, bus, turnTimeoutMs } = options;
    const settlements = this.#settlements;
    this.#commands = new ChannelCommands({
      store,
      pool,
      bus,
      settlements,
      turnTimeoutMs,
      onSession,
    });
    this.#idleOutput = new IdleOutput({
      store,
      bus,
      ...(options.logger ? { logger: options.logger } : {}),
      onSession,
      track: (work) => this.#track(work),
    });
  }

  /** Loads session ids, replays unanswered messages, re-arms deferred retries. */
  async start(): Promise<void> {
    const { store } = this.#options;
    for (const channel of await store.listChannels()) {
      this.#channel(channel.id).sessionId = channel.sessionId;
    }
    const caps = {
      maxAttempts: this.#options.maxAttempts ?? defaultDeliveryCaps.maxAttempts,
      maxDeliveries: this.#options.maxDeliveries ?? defaultDeliveryCaps.maxDeliveries,
    };
    const work = await leftoverWork(store, caps, this.#options.claimChannel);
    for (const { message, text } of work.gaveUp) {
      await this.#settlements.settle([message], "failed", { kind: "error", text });
    }
    for (const message of work.replay) this.#dispatch(message, false);
    for (const [channelId, at] of work.retryAt) this.#retries.arm(channelId, at);
  }

  /**
   * Routes a message another worker stored (it woke this one, the channel's owner) or left
   * unanswered when it died: as if delivered here, without storing it again.
   */
  routeStored(message: MessageRecord): Disposition {
    if (this.#closed) throw new GatewayClosedError();
    // Already routed here (a catch-up after missed wake-ups finds it again): it is on its way.
    return this.#routed.route(message.id) ?? this.#dispatch(message, true);
  }

  /**
   * The channel is no longer driven here (its lease went to another worker): its messages may
   * be routed here again if it comes back, as that worker may not have answered them.
   */
  forget(channelId: string): void {
    this.#routed.forgetChannel(channelId);
  }

  /**
   * Marks the channel's running turn abandoned (its lease ran out unrenewed, so another worker
   * may take the channel): once its process is stopped, nothing it covered is settled here.
   * False when no turn is running.
   */
  abandon(channelId: string): boolean {
    const turn = this.#channels.get(channelId)?.turn;
    if (!turn || turn.ended) return false;
    turn.abandoned = true;
    this.forget(channelId);
    return true;
  }

  /**
   * The channel's session as the store has it now, for a channel this worker takes over from
   * another: its next turn resumes that conversation. Ignored while the channel is busy.
   */
  useSession(channelId: string, sessionId: string | null): void {
    const channel = this.#channel(channelId);
    if (channel.turn === null && !channel.commands.busy) channel.sessionId = sessionId;
  }

  /**
   * Stores the message, then routes it. Resolves once it is stored and its route chosen; one
   * stored after `close()` began is `stored`: left unanswered for the next start (or the
   * channel's next owner) to route, never handed to an agent that is being stopped.
   */
  async deliver(channelId: string, text: string, source = "http"): Promise<Delivery> {
    if (this.#closed) throw new GatewayClosedError();
    // A message that will start a turn is counted as handed over in its insert, not in a
    // second write the agent waits for. Should the route change meanwhile (a catch-up pass
    // started a turn), the count stands: this run hands it over later, counting nothing more.
    const handedTo = this.#startsTurn(channelId, text) ? this.#run : undefined;
    this.#storing.set(channelId, (this.#storing.get(channelId) ?? 0) + 1);
    let message: MessageRecord;
    try {
      message = await this.#options.store.insertUserMessage(channelId, text, source, handedTo);
    } finally {
      const left = (this.#storing.get(channelId) ?? 1) - 1;
      if (left === 0) this.#storing.delete(channelId);
      else this.#storing.set(channelId, left);
    }
    // Committed before this await resumed, so a catch-up pass may have listed and routed it
    // meanwhile (`routeStored`): it is dispatched once, and its client told the route it took.
    const routed = this.#routed.route(message.id);
    if (routed === undefined && this.#closed) return { id: message.id, disposition: "stored" };
    return {
      id: message.id,
      disposition: routed ?? this.#dispatch(message, true, handedTo !== undefined),
    };
  }

  /**
   * Whether a message delivered now would start a turn: the route `#route` takes unless
   * another message of the channel, being stored, starts the turn first.
   */
  #startsTurn(channelId: string, text: string): boolean {
    if (this.#storing.has(channelId) || this.#options.drives?.(channelId) === false) return false;
    const channel = this.#channels.get(channelId);
    return this.#routeOf(channel, channelId, parseChannelCommand(text)) === "start";
  }

  /** Which way a message goes on the channel now (`#route` acts on it). */
  #routeOf(
    channel: ChannelState | undefined,
    channelId: string,
    command: ChannelCommand | null,
  ): "command" | "queue" | "defer" | "next" | "steer" | "wait" | "start" {
    if (command !== null) return "command";
    if (channel?.commands.busy) return "queue";
    if (this.#retries.pendingUntil(channelId) !== null) return "defer";
    // A turn being settled: the message steers the next one, or starts it.
    if (channel?.turn?.ended) return "next";
    if (channel?.turn) return "steer";
    return this.#slots.mustWait(channel ?? newChannelState(channelId)) ? "wait" : "start";
  }

  /** Resolves when the message is answered or has failed (a deferral is not an end). */
  settled(messageId: string): Promise<SettledMessage> {
    return this.#settlements.settled(messageId);
  }

  /** What a channel's agent said between turns (see `IdleOutput`). */
  acceptIdleLine(channelId: string, line: Record<string, unknown>): void {
    if (this.#closed) return;
    this.#observe(this.#channel(channelId), line);
    this.#idleOutput.accept(channelId, line);
  }

  inflight(channelId: string): boolean {
    const channel = this.#channels.get(channelId);
    return channel !== undefined && (channel.turn !== null || channel.commands.busy);
  }

  /**
   * Compacts the channel's conversation once its agent is idle (messages that come
   * meanwhile wait); resolves when done, with the tokens before and after.
   */
  compact(channelId: string, instructions = ""): Promise<CommandOutcome> {
    return this.#command(this.#channel(channelId), { name: "compact", instructions });
  }

  /** Starts the channel on a new conversation once its agent is idle; resolves when done. */
  reset(channelId: string): Promise<CommandOutcome> {
    return this.#command(this.#channel(channelId), { name: "reset" });
  }

  /**
   * Stops routing. Turns still running are not settled, so their messages
   * stay unanswered in the store and the next start replays them. The context usage not
   * stored yet is written as routing work (`idle()` waits for it), not awaited here: while
   * the store is away that write is held like an answer, and the shutdown's wait for held
   * writes comes after this.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#retries.close();
    this.#slots.clear();
    for (const channel of this.#channels.values()) channel.commands.close();
    this.#track(this.#settlements.flushContext());
  }

  /** Waits for routing work started so far (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
  }

  #channel(channelId: string): ChannelState {
    let channel = this.#channels.get(channelId);
    if (!channel) {
      channel = newChannelState(channelId);
      this.#channels.set(channelId, channel);
    }
    return channel;
  }

  #publish(event: GatewayEvent): void {
    this.#options.bus.publish(event);
  }

  #track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => {
      // The store being down is logged once, by its health.
      if (isStoreUnavailable(error)) return;
      this.#options.logger?.(`gateway: routing error: ${String(error)}`);
    });
    this.#work.add(tracked);
    void tracked.finally(() => this.#work.delete(tracked));
  }

  /**
   * Routes the message here (unless another worker drives its channel) and notes its route.
   * `handedOver`: the store counted it as handed over by this run as it stored it.
   */
  #dispatch(message: MessageRecord, fresh: boolean, handedOver = false): Disposition {
    if (this.#options.drives?.(message.channelId) === false) return "forwarded";
    const disposition = this.#route(message, fresh, handedOver);
    this.#routed.add(message, disposition);
    return disposition;
  }

  /** Chooses the route synchronously (so concurrent messages see each other), then acts. */
  #route(message: MessageRecord, fresh: boolean, handedOver: boolean): Disposition {
    const channel = this.#channel(message.channelId);
    const command = message.kind === "user" ? parseChannelCommand(message.text) : null;
    const announce = (disposition: Disposition, state: MessageState) =>
      this.#publish(routedEvent(message, fresh, disposition, state));
    const route = this.#routeOf(channel, channel.id, command);
    if (route === "command" && command !== null) {
      announce("command", "received");
      this.#track(this.#command(channel, command, message));
      return "command";
    }
    if (route === "queue") {
      announce("queued", "received");
      channel.backlog.push(message);
      return "queued";
    }
    if (route === "defer") {
      announce("deferred", "deferred");
      const retryAt = this.#retries.pendingUntil(channel.id) ?? Date.now();
      this.#track(this.#outcomes.defer([message], new Date(retryAt)));
      return "deferred";
    }
    if (route === "next") {
      announce("steered", "received");
      channel.backlog.push(message);
      return "steered";
    }
    if (route === "wait") {
      announce("waiting", "received");
      channel.backlog.push(message);
      this.#slots.wait(channel);
      return "waiting";
    }
    const active = channel.turn;
    if (route === "steer" && active !== null) {
      announce("steered", "steered");
      this.#track(this.#turns.steer(channel, active, message));
      return "steered";
    }
    const turn = this.#turns.open(channel, message, handedOver);
    channel.turn = turn;
    const disposition = turn.oneShot ? "one_shot" : "started";
    announce(disposition, "received");
    this.#track(this.#turns.run(channel, turn));
    return disposition;
  }

  /** The channel's agent is idle: queued commands run first, then the held messages. */
  #release(channel: ChannelState): void {
    if (this.#closed || channel.turn !== null || this.#slots.waiting(channel)) return;
    // A command may need a process of its own (`/compact`): it waits for one like a turn.
    if (channel.commands.pending && this.#slots.mustWait(channel)) {
      this.#slots.wait(channel);
      return;
    }
    const commands = channel.commands.drain(() => this.#release(channel));
    if (commands !== null) {
      this.#track(commands);
      return;
    }
    if (!channel.commands.busy) {
      for (const message of channel.backlog.splice(0)) this.#dispatch(message, false);
    }
    // The channel's agent may be idle now: its kept process can make room for one waiting.
    if (this.#slots.size > 0) this.#slots.wake();
  }

  /** Queues a command for when the agent is idle; `typed` is the message that said it. */
  #command(
    channel: ChannelState,
    command: ChannelCommand,
    typed?: MessageRecord,
  ): Promise<CommandOutcome> {
    if (this.#closed) return Promise.reject(new GatewayClosedError());
    const done = channel.commands.push(async () => {
      if (typed) await this.#options.store.setMessageState(typed.id, "received", this.#run);
      const outcome = await this.#commands.run(channel, command, typed);
      if (outcome.ok && outcome.command === "reset") {
        channel.sessionId = null;
        channel.context = new ContextUsageTracker();
      }
      return outcome;
    });
    this.#release(channel);
    return done;
  }

  #observe(channel: ChannelState, line: unknown): void {
    this.#options.onAgentOutput?.(channel.id, line);
    const work = this.#commands.observe(channel, line);
    if (work !== null) this.#track(work);
  }

  async #retry(channelId: string): Promise<void> {
    if (this.#closed) return;
    const deferred = await this.#options.store.listDeferred();
    // Closed meanwhile: they stay deferred, for the next start to re-arm.
    if (this.#closed) return;
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
