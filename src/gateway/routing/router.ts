import { randomUUID } from "node:crypto";
import { ContextUsageTracker } from "../agents/context-usage.js";
import { IdleOutput } from "../agents/idle-output.js";
import { wakeHeldText } from "../budgets/budget-text.js";
import type { Disposition, MessageAttachment } from "../events.js";
import { GatewayClosedError } from "../gateway-closed-error.js";
import type { DeliveryClaim } from "../store/source-store.js";
import type { MessageRecord } from "../store/store.js";
import { parseChannelCommand } from "./channel-command.js";
import type { CommandOutcome } from "./channel-commands.js";
import { ChannelDispatch } from "./channel-dispatch.js";
import { newChannelState } from "./channel-state.js";
import { ChannelStates } from "./channel-states.js";
import { defaultDeliveryCaps, leftoverWork } from "./leftover-work.js";
import { RoutedMessages } from "./routed-messages.js";
import type { Delivery, RouterOptions } from "./router-options.js";
import { RoutingWork } from "./routing-work.js";
import { type SettledMessage, Settlements, storedMessage } from "./settlements.js";

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
 * messages a previous run never answered are dispatched again. This is the routing's face
 * (delivery, start and close, a channel handed between workers); `ChannelDispatch` chooses
 * and takes each message's route, a `TurnRunner` runs the turns and steers it chose.
 */
export class Router {
  readonly #options: RouterOptions;
  readonly #channels: ChannelStates;
  readonly #work: RoutingWork;
  readonly #settlements: Settlements;
  readonly #routed = new RoutedMessages();
  /** Channels with messages being stored by `deliver`, and how many. */
  readonly #storing = new Map<string, number>();
  /** This gateway run, in the store's delivery counts: each run counts a message once. */
  readonly #run = randomUUID();
  #closed = false;
  /** Whether the channels' session ids were loaded (`restoreSessions`). */
  #restored = false;

  readonly #dispatch: ChannelDispatch;
  readonly #idleOutput: IdleOutput;

  constructor(options: RouterOptions) {
    const { store, bus, logger } = options;
    this.#options = options;
    this.#channels = new ChannelStates(store);
    this.#work = new RoutingWork(logger);
    const bindings = options.budget?.bindings;
    this.#settlements = new Settlements(
      store,
      bus,
      bindings ? (channelId) => bindings.bindingFor(channelId).name : undefined,
      options.sentFiles,
    );
    this.#dispatch = new ChannelDispatch({
      router: options,
      run: this.#run,
      channels: this.#channels,
      work: this.#work,
      routed: this.#routed,
      settlements: this.#settlements,
      closed: () => this.#closed,
      admitting: () => this.#storing.size > 0,
    });
    this.#idleOutput = new IdleOutput({
      store,
      bus,
      ...(logger ? { logger } : {}),
      onSession: (channelId, sessionId) =>
        this.#work.track(this.#channels.rememberSession(this.#channels.get(channelId), sessionId)),
      track: (work) => this.#work.track(work),
    });
  }

  /**
   * Loads the channels' session ids: before anything is routed (a source delivering as it
   * starts), so a message goes on with its channel's conversation. Once; `start` does it if
   * nobody did.
   */
  async restoreSessions(): Promise<void> {
    if (this.#restored) return;
    this.#restored = true;
    for (const channel of await this.#options.store.listChannels()) {
      this.#channels.get(channel.id).sessionId = channel.sessionId;
    }
  }

  /** Loads session ids (unless done), replays unanswered messages, re-arms deferred retries. */
  async start(): Promise<void> {
    const { store } = this.#options;
    await this.restoreSessions();
    const caps = {
      maxAttempts: this.#options.maxAttempts ?? defaultDeliveryCaps.maxAttempts,
      maxDeliveries: this.#options.maxDeliveries ?? defaultDeliveryCaps.maxDeliveries,
    };
    const work = await leftoverWork(store, caps, this.#options.claimChannel);
    for (const { message, text } of work.gaveUp) {
      await this.#settlements.settle([message], "failed", { kind: "error", text });
    }
    // Skipping those routed meanwhile: on a shared store a wake-up or a sweep may come first.
    for (const message of work.replay) {
      if (this.#routed.route(message.id) === undefined) this.#dispatch.dispatch(message, false);
    }
    for (const [channelId, at] of work.retryAt) this.#dispatch.retryAt(channelId, at);
  }

  /**
   * Routes a message another worker stored (it woke this one, the channel's owner) or left
   * unanswered when it died: as if delivered here, without storing it again.
   */
  routeStored(message: MessageRecord): Disposition {
    if (this.#closed) throw new GatewayClosedError();
    // Already routed here (a catch-up after missed wake-ups finds it again): it is on its way.
    return this.#routed.route(message.id) ?? this.#dispatch.dispatch(message, true);
  }

  /**
   * Whether nothing here holds the message: never routed here (or forgotten since), and its
   * channel idle (no turn, command or waiting message). What a missed wake-up leaves behind.
   */
  unrouted(message: MessageRecord): boolean {
    if (this.#routed.route(message.id) !== undefined) return false;
    const channel = this.#channels.find(message.channelId);
    return channel === undefined || this.#dispatch.idle(channel);
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
    const turn = this.#channels.find(channelId)?.turn;
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
    const channel = this.#channels.get(channelId);
    if (channel.turn === null && !channel.commands.busy) channel.sessionId = sessionId;
  }

  /**
   * Stores the message, then routes it. Resolves once it is stored and its route chosen; one
   * stored after `close()` began is `stored`: left unanswered for the next start (or the
   * channel's next owner) to route, never handed to an agent that is being stopped.
   * `stored` is called once the message is committed, before it is routed (a chat source
   * acknowledges to its platform then). `attachments`: the files that came with it, stored
   * with it (see `MessageAttachment`). `claim`: its chat delivery claim, finished as it is stored.
   */
  async deliver(
    channelId: string,
    text: string,
    source = "http",
    stored?: () => void,
    attachments?: readonly MessageAttachment[],
    claim?: DeliveryClaim,
  ): Promise<Delivery> {
    if (this.#closed) throw new GatewayClosedError();
    // A message that will start a turn is counted as handed over in its insert, not in a
    // second write the agent waits for. Should the route change meanwhile (a catch-up pass
    // started a turn), the count stands: this run hands it over later, counting nothing more.
    const handedTo = this.#startsTurn(channelId, text) ? this.#run : undefined;
    this.#storing.set(channelId, (this.#storing.get(channelId) ?? 0) + 1);
    let message: MessageRecord;
    try {
      message = await this.#options.store.insertUserMessage(
        channelId,
        text,
        source,
        handedTo,
        attachments,
        claim,
      );
    } finally {
      const left = (this.#storing.get(channelId) ?? 1) - 1;
      if (left === 0) this.#storing.delete(channelId);
      else this.#storing.set(channelId, left);
    }
    stored?.();
    // Committed before this await resumed, so a catch-up pass may have listed and routed it
    // meanwhile (`routeStored`): it is dispatched once, and its client told the route it took.
    const routed = this.#routed.route(message.id);
    if (routed === undefined && this.#closed) return { id: message.id, disposition: "stored" };
    return {
      id: message.id,
      disposition: routed ?? this.#dispatch.dispatch(message, true, handedTo !== undefined),
    };
  }

  /**
   * Whether a message delivered now would start a turn: the route `dispatch` takes unless
   * another message of the channel, being stored, starts the turn first.
   */
  #startsTurn(channelId: string, text: string): boolean {
    if (this.#storing.has(channelId) || this.#options.drives?.(channelId) === false) return false;
    const channel = this.#channels.find(channelId) ?? newChannelState(channelId);
    return this.#dispatch.routeOf(channel, parseChannelCommand(text)) === "start";
  }

  /** Resolves when the message is answered or has failed (a deferral is not an end). */
  settled(messageId: string): Promise<SettledMessage> {
    return this.#settlements.settled(messageId);
  }

  /** What a channel's agent said between turns (see `IdleOutput`). */
  /** A line of a channel's agent between turns; `costUsd` with a wake-up's `result`. */
  acceptIdleLine(channelId: string, line: Record<string, unknown>, costUsd?: number): void {
    if (this.#closed) return;
    this.#dispatch.observe(this.#channels.get(channelId), line);
    this.#idleOutput.accept(channelId, line);
    // A wake-up's spend: no turn record holds it.
    const { budget } = this.#options;
    if (line.type === "result" && budget !== undefined) {
      this.#work.track(
        budget.record(channelId, "wake", { costUsd: costUsd ?? 0, usage: line.usage }),
      );
    }
  }

  /**
   * Whether the channel's agent may wake itself for background tasks that ended after its
   * turn: undefined when it may; when a budget holds the channel, why not, also said in the
   * channel (as a schedule paused by a budget says it). A store that cannot be read holds
   * nothing back.
   */
  async mayWake(channelId: string): Promise<string | undefined> {
    const { budget, store, bus, logger } = this.#options;
    const breach = await budget?.check(channelId).catch(() => null);
    if (!breach || this.#closed) return undefined;
    const text = wakeHeldText(breach);
    logger?.(`gateway: channel ${channelId}: ${text}`);
    const record = await store.insertSystemMessage(channelId, text, "error").catch(() => null);
    if (record) bus.publish({ type: "error", message: storedMessage(record), channelId });
    return text;
  }

  inflight(channelId: string): boolean {
    const channel = this.#channels.find(channelId);
    return channel !== undefined && (channel.turn !== null || channel.commands.busy);
  }

  /**
   * Interrupts the channel's running turn (the page's Stop): the agent process lives on, the
   * turn ends with what it did so far, and the next message works as usual. False when no turn
   * runs here.
   */
  async interrupt(channelId: string): Promise<boolean> {
    const turn = this.#channels.find(channelId)?.turn;
    if (!turn || turn.ended) return false;
    turn.stopped = true;
    await turn.process.interrupt();
    return true;
  }

  /**
   * The budgets changed (the configuration was reloaded): the messages they held are routed
   * again at once, each checked against the limits now in force as its turn starts.
   */
  budgetsChanged(): void {
    if (!this.#closed) this.#dispatch.retryHeld();
  }

  /**
   * Compacts the channel's conversation once its agent is idle (messages that come
   * meanwhile wait); resolves when done, with the tokens before and after.
   */
  compact(channelId: string, instructions = ""): Promise<CommandOutcome> {
    return this.#dispatch.command(this.#channels.get(channelId), { name: "compact", instructions });
  }

  /**
   * Starts the channel on a new conversation once its agent is idle (removing its worktree:
   * refused with uncommitted work there unless `confirm`); resolves when done.
   */
  reset(channelId: string, confirm = false): Promise<CommandOutcome> {
    return this.#dispatch.command(this.#channels.get(channelId), { name: "reset", confirm });
  }

  /**
   * Runs `work` once the channel's agent is idle (its turn over, the commands before it done),
   * alone: messages that come meanwhile wait behind it. What a channel's removal runs in.
   */
  whenIdle<T>(channelId: string, work: () => Promise<T>): Promise<T> {
    return this.#dispatch.whenIdle(this.#channels.get(channelId), work);
  }

  /**
   * The channel was removed from the store: its conversation, context and routed messages are
   * forgotten, and of the messages it held only those stored since (a new channel of the same
   * id) are still routed. Called from the `whenIdle` work that removed it.
   */
  async removed(channelId: string): Promise<void> {
    const channel = this.#channels.get(channelId);
    channel.sessionId = null;
    channel.context = new ContextUsageTracker();
    this.#routed.forgetChannel(channelId);
    const held = channel.backlog.splice(0);
    for (const message of held) {
      if ((await this.#options.store.getMessage(message.id)) !== null)
        channel.backlog.push(message);
    }
  }

  /** What the channel's agent is (binding, folder, engine, model, sandbox, context, spend). */
  status(channelId: string): Promise<CommandOutcome> {
    return this.#dispatch.command(this.#channels.get(channelId), { name: "status" });
  }

  /** Switches the channel's model from its next turn, within what its binding allows. */
  model(channelId: string, model: string): Promise<CommandOutcome> {
    return this.#dispatch.command(this.#channels.get(channelId), { name: "model", model });
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
    this.#dispatch.close();
    this.#work.track(this.#settlements.flushContext());
  }

  /** Waits for routing work started so far (tests and shutdown). */
  idle(): Promise<void> {
    return this.#work.idle();
  }
}
