import type { AcquiredProcess } from "../agents/agent-process.js";
import { ContextUsageTracker } from "../agents/context-usage.js";
import type { Disposition, MessageState } from "../events.js";
import { GatewayClosedError } from "../gateway-closed-error.js";
import type { MessageRecord } from "../store/store.js";
import { AgentSlots } from "./agent-slots.js";
import { AgentStarts } from "./agent-starts.js";
import { type ChannelCommand, parseChannelCommand } from "./channel-command.js";
import { ChannelCommands, type CommandOutcome } from "./channel-commands.js";
import type { ChannelState } from "./channel-state.js";
import type { ChannelStates } from "./channel-states.js";
import { type MessageRoute, messageRoute } from "./message-route.js";
import { RetryTimers } from "./retry-timers.js";
import { routedEvent } from "./routed-event.js";
import type { RoutedMessages } from "./routed-messages.js";
import type { RouterOptions } from "./router-options.js";
import type { RoutingWork } from "./routing-work.js";
import type { Settlements } from "./settlements.js";
import { TurnRunner } from "./turn-runner.js";
import { TurnSettlement } from "./turn-settlement.js";

/** What a `ChannelDispatch` is given by its router. */
export interface ChannelDispatchOptions {
  router: RouterOptions;
  /** The router's gateway run, in the store's delivery counts. */
  run: string;
  channels: ChannelStates;
  work: RoutingWork;
  routed: RoutedMessages;
  settlements: Settlements;
  /** Whether the router is closed: nothing more is routed or released. */
  closed: () => boolean;
  /** Whether a message is being stored now: agent processes start after (`AgentStarts`). */
  admitting: () => boolean;
}

/**
 * Takes each message of a channel the way its route says (`messageRoute`): runs or queues a
 * command, holds it in the channel's backlog, defers it, steers the turn running, or starts a
 * turn (`TurnRunner`); and, once the channel's agent is idle, releases what was held (queued
 * commands first, then the backlog). The route is chosen synchronously, so messages that come
 * together see each other's.
 */
export class ChannelDispatch {
  readonly #options: ChannelDispatchOptions;
  readonly #retries: RetryTimers;
  readonly #slots: AgentSlots;
  readonly #starts: AgentStarts;
  readonly #outcomes: TurnSettlement;
  readonly #turns: TurnRunner;
  readonly #commands: ChannelCommands;
  /** Commands (`/compact`) waiting among the channels for a process, given it when admitted. */
  readonly #slotWaiters = new Map<ChannelState, (acquired: AcquiredProcess | null) => void>();

  constructor(options: ChannelDispatchOptions) {
    this.#options = options;
    const { router, channels, work, settlements } = options;
    const track = (promise: Promise<unknown>) => work.track(promise);
    this.#retries = new RetryTimers((channelId) => track(this.#retry(channelId)));
    this.#slots = new AgentSlots({
      pool: router.pool,
      evictable: (channelId) => {
        const channel = channels.find(channelId);
        if (channel === undefined) return true;
        return channel.turn === null && !channel.commands.busy && channel.backlog.length === 0;
      },
      admit: (channel) => this.#admit(channel),
      logger: router.logger,
    });
    this.#starts = new AgentStarts({ admitting: options.admitting });
    this.#outcomes = new TurnSettlement(
      settlements,
      this.#retries,
      router.rateLimitRetryMs ?? 60_000,
    );
    this.#turns = new TurnRunner({
      router,
      run: options.run,
      outcomes: this.#outcomes,
      closed: options.closed,
      track,
      rememberSession: (channel, sessionId) => channels.rememberSession(channel, sessionId),
      observe: (channel, line) => this.observe(channel, line),
      record: (event) => settlements.record(event),
      release: (channel) => this.release(channel),
      starts: this.#starts,
    });
    const { store, pool, bus, turnTimeoutMs, worktrees } = router;
    this.#commands = new ChannelCommands({
      store,
      pool,
      bus,
      settlements,
      turnTimeoutMs,
      facts: router.facts,
      worktrees,
      budget: router.budget,
      onSession: (channelId, sessionId) =>
        track(channels.rememberSession(channels.get(channelId), sessionId)),
      acquire: (channel) => this.#acquire(channels.get(channel.id)),
      mayStart: async () => {
        await this.#starts.next();
        return !options.closed();
      },
    });
  }

  /**
   * A process for a command of the channel: at once when the pool has room, else when the
   * channel's turn among those waiting comes (null if the router closes first).
   */
  #acquire(channel: ChannelState): Promise<AcquiredProcess | null> {
    if (this.#options.closed()) return Promise.resolve(null);
    if (!this.#slots.mustWait(channel)) {
      const acquired = this.#options.router.pool.acquire(channel.id, channel.sessionId);
      if (acquired !== null) return Promise.resolve(acquired);
    }
    return new Promise((resolve) => {
      this.#slotWaiters.set(channel, resolve);
      this.#slots.wait(channel);
    });
  }

  /** The channel's turn for a process came: a command waiting takes it, else what it holds goes. */
  #admit(channel: ChannelState): void {
    const waiter = this.#slotWaiters.get(channel);
    if (waiter === undefined) {
      this.release(channel);
      return;
    }
    // Taken now, in the admission's own step, so the next channel admitted sees it counted.
    const acquired = this.#options.router.pool.acquire(channel.id, channel.sessionId);
    if (acquired === null) {
      this.#slots.wait(channel);
      return;
    }
    this.#slotWaiters.delete(channel);
    waiter(acquired);
  }

  /**
   * Routes the message here (unless another worker drives its channel) and notes its route.
   * `handedOver`: the store counted it as handed over by this run as it stored it.
   */
  dispatch(message: MessageRecord, fresh: boolean, handedOver = false): Disposition {
    if (this.#options.router.drives?.(message.channelId) === false) return "forwarded";
    const disposition = this.#route(message, fresh, handedOver);
    this.#options.routed.add(message, disposition);
    return disposition;
  }

  /** Whether nothing of the channel runs or waits here: no turn, command or held message. */
  idle(channel: ChannelState): boolean {
    return (
      channel.turn === null &&
      !channel.commands.busy &&
      channel.backlog.length === 0 &&
      !this.#slots.waiting(channel) &&
      !this.#slotWaiters.has(channel)
    );
  }

  /** Which way a message goes on the channel now (`dispatch` acts on it). */
  routeOf(channel: ChannelState, command: ChannelCommand | null): MessageRoute {
    return messageRoute(channel, command, {
      rateLimited: this.#retries.pendingUntil(channel.id) !== null,
      mustWait: (waiting) => this.#slots.mustWait(waiting),
    });
  }

  /** The channel's messages deferred by a rate limit are routed again at `at` (epoch ms). */
  retryAt(channelId: string, at: number): void {
    this.#retries.arm(channelId, at);
  }

  /** Queues a command for when the agent is idle; `typed` is the message that said it. */
  command(
    channel: ChannelState,
    command: ChannelCommand,
    typed?: MessageRecord,
  ): Promise<CommandOutcome> {
    if (this.#options.closed()) return Promise.reject(new GatewayClosedError());
    if (command.name === "status" || command.name === "model") {
      // About the channel, not its conversation: answered at once, even during a turn.
      return (async () => {
        const { store } = this.#options.router;
        if (typed) await store.setMessageState(typed.id, "received", this.#options.run);
        return this.#commands.run(channel, command, typed);
      })();
    }
    const done = channel.commands.push(async () => {
      const { store } = this.#options.router;
      if (typed) await store.setMessageState(typed.id, "received", this.#options.run);
      const outcome = await this.#commands.run(channel, command, typed);
      if (outcome.ok && outcome.command === "reset") {
        channel.sessionId = null;
        channel.context = new ContextUsageTracker();
      }
      return outcome;
    });
    this.release(channel);
    return done;
  }

  /**
   * Runs `work` alone once the channel's agent is idle, as a command (its turn ends first;
   * messages that come meanwhile wait behind it).
   */
  whenIdle<T>(channel: ChannelState, work: () => Promise<T>): Promise<T> {
    if (this.#options.closed()) return Promise.reject(new GatewayClosedError());
    const done = channel.commands.push(work);
    this.release(channel);
    return done;
  }

  /** A line the channel's agent wrote (context usage, a command's answer). */
  observe(channel: ChannelState, line: unknown): void {
    this.#options.router.onAgentOutput?.(channel.id, line);
    const work = this.#commands.observe(channel, line);
    if (work !== null) this.#options.work.track(work);
  }

  /**
   * The channel's agent is idle: queued commands run first, then the held messages. Commands
   * run while the channel waits in the cap's line too: one that needs a process (`/compact`)
   * waits for it itself (`#acquire`), and one that needs none (`/clear`, a removal) is not
   * held behind other channels' turns.
   */
  release(channel: ChannelState): void {
    if (this.#options.closed() || channel.turn !== null) return;
    const commands = channel.commands.drain(() => this.release(channel));
    if (commands !== null) {
      this.#options.work.track(commands);
      return;
    }
    if (this.#slots.waiting(channel)) {
      // Nothing left to start (a removal took its messages): it leaves the line.
      const needed = channel.backlog.length > 0 || this.#slotWaiters.has(channel);
      if (!needed && !channel.commands.busy) this.#slots.leave(channel);
      return;
    }
    if (!channel.commands.busy) {
      for (const message of channel.backlog.splice(0)) this.dispatch(message, false);
    }
    // The channel's agent may be idle now: its kept process can make room for one waiting.
    if (this.#slots.size > 0) this.#slots.wake();
  }

  /**
   * Routes again at once the messages budgets hold (the limits were raised or the budgets
   * changed): each is checked again as its turn starts.
   */
  retryHeld(): void {
    for (const channelId of this.#retries.takeHeld())
      this.#options.work.track(this.#retry(channelId));
  }

  /** Stops retries and forgets the waiting channels; their messages stay in the store. */
  close(): void {
    this.#retries.close();
    this.#slots.clear();
    for (const resolve of this.#slotWaiters.values()) resolve(null);
    this.#slotWaiters.clear();
    this.#starts.close();
    for (const channel of this.#options.channels.values()) channel.commands.close();
  }

  /** Chooses the route synchronously (so concurrent messages see each other), then acts. */
  #route(message: MessageRecord, fresh: boolean, handedOver: boolean): Disposition {
    const { channels, work } = this.#options;
    const channel = channels.get(message.channelId);
    const command = message.kind === "user" ? parseChannelCommand(message.text) : null;
    const announce = (disposition: Disposition, state: MessageState) =>
      this.#options.router.bus.publish(routedEvent(message, fresh, disposition, state));
    const route = this.routeOf(channel, command);
    if (route === "command" && command !== null) {
      announce("command", "received");
      work.track(this.command(channel, command, message));
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
      const held = this.#retries.heldText(channel.id);
      work.track(this.#outcomes.defer([message], new Date(retryAt), held));
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
      work.track(this.#turns.steer(channel, active, message));
      return "steered";
    }
    const turn = this.#turns.open(channel, message, handedOver);
    channel.turn = turn;
    const disposition = turn.oneShot ? "one_shot" : "started";
    announce(disposition, "received");
    work.track(this.#turns.run(channel, turn));
    return disposition;
  }

  async #retry(channelId: string): Promise<void> {
    if (this.#options.closed()) return;
    const deferred = await this.#options.router.store.listDeferred();
    // Closed meanwhile: they stay deferred, for the next start to re-arm.
    if (this.#options.closed()) return;
    for (const message of deferred) {
      if (message.channelId === channelId) this.dispatch(message, false);
    }
  }
}
