import type { MessageAttachment } from "../events.js";
import type { Delivery, Router } from "../routing/router.js";
import type { SharedStore, WorkerLeases } from "../store/shared-store.js";
import type { DeliveryClaim } from "../store/source-store.js";
import type { MessageRecord } from "../store/store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";
import { type ForwardingWorker, forwardToOwner, wakeOwner } from "./forward-to-owner.js";
import type { ForwardWatch } from "./forwarded-outcome.js";
import { handOver } from "./hand-over.js";
import { LeaseConfirmations } from "./lease-confirmations.js";
import { MissedMessages } from "./missed-messages.js";
import { isSourceLease, SourceLeases } from "./source-leases.js";

export interface ChannelOwnershipOptions {
  store: SharedStore;
  router: Router;
  /** This worker's name in leases and wake-ups (what `GET /api/health` shows). */
  worker: string;
  /** A lease lasts this long unless renewed; renewed every third of it. */
  leaseSeconds: number;
  /** Stops the channel's agent process (its lease was lost to another worker). */
  stopChannel: (channelId: string) => Promise<unknown>;
  /** Watches a channel for what its owner does with a forwarded message (see watchForwarded). */
  watchForwarded?: (channelId: string) => ForwardWatch;
  /**
   * The session a channel this worker just took resumes, given the stored one: its transcript
   * restored here first (see `sessionAfterTakeover`); null for a new conversation.
   */
  resumeSession?: (channelId: string, sessionId: string | null) => Promise<string | null>;
  logger?: (line: string) => void;
}

/**
 * Which channels this worker drives, when several workers share one database. A channel is
 * driven by the worker holding its lease. A message arriving here for a channel no live worker
 * holds is claimed and routed here; one for a channel another worker holds is stored and that
 * worker woken (`LISTEN/NOTIFY`), and the client is told `steered` when the owner steered its
 * running turn with it (its announcement seen in the shared events), else `forwarded`. Every third of a lease
 * period the worker renews its leases and takes the channels whose owner died (their leases
 * expired with messages unanswered), replaying those messages. `stop()` releases every lease,
 * so another worker takes the channels at once instead of waiting for them to expire.
 *
 * A worker that finds a lease lost stops the channel's agent process at once, routes nothing
 * more to it (`holds` is false), and the store refuses its late answers (`fence`). One that
 * cannot renew stops its running turns the moment their leases would expire by its own clock
 * (`#lapsed`), before another worker can take their channels.
 */
export class ChannelOwnership {
  readonly #options: ChannelOwnershipOptions;
  readonly #leases: WorkerLeases;
  /** The leases of sources that receive on one worker of the cluster (see source-leases.ts). */
  readonly #sources: SourceLeases;
  readonly #held = new Set<string>();
  /** Channels just taken, until their session is ready to resume here. */
  readonly #adopting = new Map<string, Promise<void>>();
  #listener: { close(): Promise<void> } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  /** Fires when the leases renewed last run out (see `#armLapse`). */
  #lapseTimer: NodeJS.Timeout | undefined;
  /** Channels whose turn `#lapsed` stopped, until the next renewal says whether they are ours. */
  readonly #abandoned = new Set<string>();
  /** When each held channel's lease was last taken or renewed (see lease-confirmations.ts). */
  readonly #confirmed: LeaseConfirmations;
  /** The safety net under wake-ups: messages of held channels nothing here routed. */
  readonly #missed: MissedMessages;
  /** What forwarding a message to its channel's owner needs of this worker. */
  readonly #forwarding: ForwardingWorker;
  #stopped = false;
  /** Shutting down: leases renewed, no channel taken, nothing routed. */
  #quiet = false;

  constructor(options: ChannelOwnershipOptions) {
    this.#options = options;
    this.#leases = options.store.channelLeases(options.worker, options.leaseSeconds);
    this.#sources = new SourceLeases(this.#leases, options.logger ?? (() => {}));
    this.#confirmed = new LeaseConfirmations(options.leaseSeconds);
    this.#forwarding = {
      store: options.store,
      leases: this.#leases,
      worker: options.worker,
      leaving: () => this.#quiet || this.#stopped,
      sweepNow: () => void this.#tick(),
      watch: options.watchForwarded,
      routeHere: (messageId) => this.#woken(messageId),
    };
    this.#missed = new MissedMessages({
      store: options.store,
      unrouted: (message) => options.router.unrouted(message),
      holds: this.holds,
      ready: (channelId) => this.#adopting.get(channelId),
      route: (message) => this.#route(message),
      logger: options.logger,
    });
    options.store.fence(options.worker);
  }

  get worker(): string {
    return this.#options.worker;
  }

  /** `SourceContext.exclusive`: the source receives only while this worker holds its lease. */
  receiveExclusive = (
    name: string,
    receive: (signal: AbortSignal) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> => this.#sources.run(name, receive, signal);

  /** Whether this worker drives the channel now (it claimed it and has not lost it since). */
  holds = (channelId: string): boolean => this.#held.has(channelId);

  /**
   * Claims for the router's `start()`: this worker may drive the channel. A channel held here
   * whose lease was confirmed less than a third of a lease ago (when the next renewal is due)
   * is not asked for again: its lease runs for two thirds more at least, and no other worker
   * can take an unexpired lease. So a busy channel costs no lease statement per message.
   * A worker shutting down (`quiesce`, `stop`) claims nothing: false, and a lease its claim
   * took meanwhile is given up at once, so another worker may take the channel.
   */
  claim = async (channelId: string): Promise<boolean> => {
    if (this.#quiet || this.#stopped) return false;
    if (this.#held.has(channelId) && this.#confirmed.fresh(channelId)) {
      await this.#adopting.get(channelId);
      return true;
    }
    const asked = Date.now();
    if (!(await this.#leases.claim(channelId))) return false;
    if (this.#quiet || this.#stopped) {
      if (!this.#held.has(channelId)) await this.#leases.release(channelId);
      return false;
    }
    this.#confirmed.claimed(channelId, asked);
    if (!this.#held.has(channelId)) this.#adopt(channelId);
    await this.#adopting.get(channelId);
    return true;
  };

  /**
   * `claim` for a message arriving here: a channel just taken (its last owner stopped, or
   * died, leaving messages unanswered) has those messages routed first, in order, as the
   * sweep would have; the sweep itself no longer finds the channel, as it is held now.
   */
  async #take(channelId: string): Promise<boolean> {
    const taken = !this.#held.has(channelId);
    if (!(await this.claim(channelId))) return false;
    if (taken && !this.#options.router.inflight(channelId)) {
      const { store } = this.#options;
      for (const message of [...(await store.listUnanswered()), ...(await store.listDeferred())]) {
        if (message.channelId === channelId) this.#route(message);
      }
    }
    return true;
  }

  /**
   * A channel this worker now holds: its stored session (restored here) is what the router
   * resumes. Messages of the channel wait for it (`claim` awaits it).
   */
  #adopt(channelId: string): Promise<void> {
    this.#held.add(channelId);
    const { store, router, resumeSession } = this.#options;
    const adopting = (async () => {
      const stored = (await store.getChannel(channelId))?.sessionId ?? null;
      router.useSession(channelId, resumeSession ? await resumeSession(channelId, stored) : stored);
    })().finally(() => this.#adopting.delete(channelId));
    this.#adopting.set(channelId, adopting);
    return adopting;
  }

  /** Which worker holds the channel's lease, and whether that lease is live; null when none. */
  holder(channelId: string): Promise<{ owner: string; live: boolean } | null> {
    return this.#leases.holder(channelId);
  }

  /** The channel was removed: its lease is given up (a new message takes it anew). */
  async release(channelId: string): Promise<void> {
    this.#held.delete(channelId);
    this.#confirmed.forget(channelId);
    this.#options.router.forget(channelId);
    await this.#leases.release(channelId);
  }

  /** Listens for wake-ups and starts renewing; call before the router's `start()`. */
  async start(): Promise<void> {
    this.#listener = await this.#options.store.listenForWakeUps(
      this.worker,
      (messageId) => void this.#woken(messageId),
      () => void this.revalidate(),
    );
    const period = Math.max(200, (this.#options.leaseSeconds * 1000) / 3);
    this.#timer = setInterval(() => void this.#tick(), period);
    this.#timer.unref();
    // Every lease claimed from now on lasts at least until then, unless renewed.
    this.#armLapse(Date.now());
  }

  /**
   * What the sources deliver through: routed here, or stored for the channel's owner. While
   * this worker shuts down, stored for another worker: the owner woken when another holds the
   * channel, else every worker (the first to claim it routes it); one this worker holds goes
   * with its leases (see `stop`). `stored`: as the router's.
   */
  async deliver(
    channelId: string,
    text: string,
    source: string,
    stored?: () => void,
    attachments?: readonly MessageAttachment[],
    claim?: DeliveryClaim,
  ): Promise<Delivery> {
    if (await this.#take(channelId)) {
      const { router } = this.#options;
      const delivery = await router.deliver(channelId, text, source, stored, attachments, claim);
      // Stored after the channel left this worker between its claim and the routing.
      if (delivery.disposition === "forwarded") {
        await wakeOwner(channelId, delivery.id, this.#forwarding);
      }
      return delivery;
    }
    const message = { channelId, text, source, stored, attachments, claim };
    return forwardToOwner(message, this.#forwarding);
  }

  async #woken(messageId: string): Promise<void> {
    if (this.#stopped || this.#quiet) return;
    try {
      const message = await this.#options.store.getMessage(messageId);
      if (message === null || message.kind !== "user" || message.state !== "received") return;
      if (await this.#take(message.channelId)) this.#route(message);
    } catch (error) {
      // While the store is down its health logs once; the catch-up on its return routes this.
      if (isStoreUnavailable(error)) return;
      this.#options.logger?.(`gateway: wake-up for ${messageId} failed: ${String(error)}`);
    }
  }

  /**
   * After the store or the wake-up connection was lost and is back: renews every lease (a channel
   * lost meanwhile is stopped before anything else is done for it), takes orphaned channels,
   * and routes the unanswered messages of the channels held here that it may have missed
   * wake-ups for (the router skips those it routed already). Resolves when done; a failure is
   * the store's (it is gone again).
   */
  async revalidate(): Promise<void> {
    if (this.#stopped) return;
    // A renewal begun before the store came back may have failed: run one after it (shared
    // with any other caller meanwhile, the wake-up connection's return and the store's).
    await this.#ticking;
    await this.#tick();
    if (this.#quiet) return;
    for (const message of await this.#options.store.listUnanswered()) {
      if (this.#held.has(message.channelId)) this.#route(message);
    }
  }

  /** Renews, notes lost leases, and takes orphaned channels; one at a time. */
  #tick(): Promise<void> {
    this.#ticking ??= this.#renewAndSweep()
      .catch((error: unknown) => {
        // An unreachable store is logged once by its health; the lapse timer guards the leases.
        if (isStoreUnavailable(error)) return;
        this.#options.logger?.(`gateway: lease renewal failed: ${String(error)}`);
      })
      .finally(() => {
        this.#ticking = undefined;
      });
    return this.#ticking;
  }

  async #renewAndSweep(): Promise<void> {
    if (this.#stopped) return;
    const { router, store, logger } = this.#options;
    const { asked, mark, renewed } = await this.#confirmed.renew(this.#leases, (at) =>
      this.#armLapse(at),
    );
    this.#armLapse(asked);
    this.#sources.renewed(new Set(renewed));
    const kept = new Set(renewed.filter((key) => !isSourceLease(key)));
    this.#confirmed.renewed(mark, kept, asked);
    // Still ours though not held here (a lapse stopped its turn, `#lapsed`): held again, and
    // its messages routed again (the store may have been slow rather than gone, so no
    // `revalidate` follows; the router skips those it routed already).
    const regained = new Set([...this.#abandoned].filter((channelId) => kept.has(channelId)));
    this.#abandoned.clear();
    for (const channelId of kept) {
      if (this.#held.has(channelId)) continue;
      regained.add(channelId);
      await this.#adopt(channelId);
    }
    if (regained.size > 0) {
      for (const message of await store.listUnanswered()) {
        if (regained.has(message.channelId)) this.#route(message);
      }
    }
    for (const channelId of [...this.#held]) {
      // Claimed while the renewal was on its way: its claim, answered later, is the newer word.
      if (kept.has(channelId) || this.#confirmed.claimedSince(mark, channelId)) continue;
      this.#held.delete(channelId);
      this.#confirmed.forget(channelId);
      router.forget(channelId);
      logger?.(`gateway: lost the lease of channel ${channelId}; stopping its agent`);
      // Its turn, if any, ends now; the store refuses its answer (see `fence`).
      await this.#options.stopChannel(channelId).catch(() => {});
    }
    if (this.#quiet) return;
    await this.#missed.sweep();
    await this.#sources.takeWanted();
    const orphans = await this.#leases.claimOrphans();
    if (orphans.length === 0) return;
    const taken = new Set(orphans);
    for (const channelId of orphans) await this.#adopt(channelId);
    // A turn still running here (a lease that lapsed while this worker stalled) settles its own.
    const busy = new Set(orphans.filter((channelId) => router.inflight(channelId)));
    const unanswered = [...(await store.listUnanswered()), ...(await store.listDeferred())];
    for (const message of unanswered) {
      if (!taken.has(message.channelId) || busy.has(message.channelId)) continue;
      logger?.(`gateway: took over channel ${message.channelId}; replaying ${message.id}`);
      this.#route(message);
    }
  }

  /**
   * After a renewal asked for at `renewedAt` (this worker's clock), runs `#lapsed` when those
   * leases expire, unless a later renewal re-arms it first. The store dates a lease from when
   * it ran the statement, never before it was asked for, so this fires at its expiry or just
   * before, never after: a turn stops before another worker can take its channel.
   */
  #armLapse(renewedAt: number): void {
    clearTimeout(this.#lapseTimer);
    const delay = renewedAt + this.#options.leaseSeconds * 1000 - Date.now();
    this.#lapseTimer = setTimeout(() => void this.#lapsed(), Math.max(0, delay));
    this.#lapseTimer.unref();
  }

  /**
   * No renewal has succeeded for a whole lease (the store out of reach, or too slow), so another
   * worker may hold this one's channels by now: each turn still running here is stopped, its
   * messages left unanswered for whoever holds the channel next (this worker again if nobody
   * took it). A turn that ended keeps its answer for the store's return, when `settle` checks
   * the lease.
   */
  async #lapsed(): Promise<void> {
    if (this.#stopped) return;
    this.#sources.lapsed();
    const abandoned = [...this.#held].filter((channelId) =>
      this.#options.router.abandon(channelId),
    );
    for (const channelId of abandoned) {
      this.#held.delete(channelId);
      this.#confirmed.forget(channelId);
      this.#abandoned.add(channelId);
      this.#options.logger?.(
        `gateway: the lease of channel ${channelId} ran out unrenewed; stopping its turn`,
      );
    }
    await Promise.all(
      abandoned.map((channelId) => this.#options.stopChannel(channelId).catch(() => {})),
    );
  }

  /** Routes a stored message here once (the router skips one it routed already). */
  #route(message: MessageRecord): void {
    if (this.#stopped || this.#quiet) return;
    this.#options.router.routeStored(message);
  }

  /**
   * The worker is shutting down but still finishing what it holds (answers kept through an
   * outage): its leases are renewed, so those answers are stored as the channels' owner, but it
   * takes no channel and routes no message any more.
   */
  quiesce(): void {
    this.#quiet = true;
    this.#sources.close();
  }

  /**
   * Stops renewing and releases every lease (a clean shutdown hands its channels over): the
   * other workers are woken for each released channel with a message unanswered, and the first
   * to claim it answers them, rather than its sweep finding them later.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#sources.close();
    this.#confirmed.clear();
    clearInterval(this.#timer);
    clearTimeout(this.#lapseTimer);
    await this.#ticking;
    await this.#listener?.close();
    const released = new Set(this.#held);
    await this.#leases.releaseAll().catch(() => {});
    await handOver(this.#options.store, released).catch(() => {});
  }
}
