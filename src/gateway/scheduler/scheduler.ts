import { Cron } from "croner";
import type { BudgetGuard } from "../budgets/budget-guard.js";
import { scheduleHeldText } from "../budgets/budget-text.js";
import type { EventBus } from "../event-bus.js";
import type { Delivery, Router } from "../routing/router.js";
import { storedMessage } from "../routing/settlements.js";
import type { GatewayStore, NewSchedule, ScheduleRecord } from "../store/store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";

/** A schedule pauses itself after this many failed firings in a row. */
export const MAX_CONSECUTIVE_FAILURES = 3;

/** A cron pattern croner does not accept; the HTTP layer answers it with 400. */
export class InvalidScheduleError extends Error {
  override readonly name = "InvalidScheduleError";
}

/**
 * The next firing of `pattern`, which has 5 fields (minute hour day month weekday), 6 with
 * seconds first, or is one of croner's nicknames (`@daily`, ...). Throws
 * `InvalidScheduleError` with the reason when croner refuses it, when the field count is
 * another (croner would take a 7th as a year), or when no date ever matches (`0 0 31 2 *`).
 */
export function nextCronRun(pattern: string): Date {
  const fields = pattern.trim().split(/\s+/);
  if (!pattern.trim().startsWith("@") && fields.length !== 5 && fields.length !== 6) {
    throw new InvalidScheduleError(
      `invalid cron pattern "${pattern}": it has ${fields.length} fields; ` +
        "it needs 5 (minute hour day month weekday), or 6 with seconds first",
    );
  }
  let nextRun: Date | null;
  try {
    const probe = new Cron(pattern, { paused: true });
    nextRun = probe.nextRun();
    probe.stop();
  } catch (error) {
    throw new InvalidScheduleError(
      `invalid cron pattern "${pattern}": ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (nextRun === null) {
    throw new InvalidScheduleError(`cron pattern "${pattern}" never fires: no date matches it`);
  }
  return nextRun;
}

export interface SchedulerOptions {
  store: GatewayStore;
  router: Router;
  /** A firing past a budget's limit pauses its schedule (and says so) instead of running. */
  budget?: BudgetGuard;
  bus: EventBus;
  logger?: (line: string) => void;
  /**
   * With several workers on one store: delivers a firing's prompt (routed here, or forwarded
   * to the channel's owner), claims each firing so that one worker fires it, and announces
   * each schedule created, resumed, paused or deleted here, so that every worker arms or
   * disarms it at once (each calls `refresh` when told).
   */
  cluster?: {
    announce(scheduleId: string): Promise<void>;
    deliver(channelId: string, text: string, source: string): Promise<Delivery>;
    claimFiring(
      scheduleId: string,
      dueAt: string,
      nextRunAt: string | null,
      now: Date,
    ): Promise<boolean>;
  };
}

/**
 * Cron schedules kept in the store, each firing posting its prompt into its
 * channel through the router (so steering, fallbacks and deferral apply).
 * A firing succeeds when its message is answered and fails when it fails; a
 * deferred message is still pending. Overlapping firings are skipped.
 * On start, a schedule whose next run passed while the gateway was down fires
 * once, however many runs were missed. With several workers, each arms every
 * schedule (`refresh` on another worker's announcement) and each firing is
 * claimed by one.
 */
export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #jobs = new Map<string, Cron>();
  /** Refreshes run one after another, so a later announcement's reading wins. */
  #refreshing: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: SchedulerOptions) {
    this.#options = options;
  }

  /**
   * Arms every schedule; one whose next run passed while the gateway was down fires once.
   * Resolves when each such firing's prompt is stored (claimed here) or the firing is found
   * another worker's; the answer comes later.
   */
  async start(): Promise<void> {
    const now = Date.now();
    const claims: Promise<void>[] = [];
    for (const schedule of await this.#options.store.listSchedules()) {
      if (schedule.paused) continue;
      const missed = schedule.nextRunAt !== null && Date.parse(schedule.nextRunAt) <= now;
      this.#arm(schedule);
      if (missed) claims.push(this.#fireUnawaited(schedule.id));
    }
    await Promise.all(claims);
  }

  /**
   * Fires once each armed schedule whose next run passed unfired (the store was unreachable
   * when it was due); resolves once each firing's prompt is stored or the firing is found
   * another worker's, not once answered.
   */
  async fireMissed(): Promise<void> {
    const now = Date.now();
    const claims: Promise<void>[] = [];
    for (const schedule of await this.#options.store.listSchedules()) {
      if (schedule.paused || !this.#jobs.has(schedule.id)) continue;
      if (schedule.nextRunAt === null || Date.parse(schedule.nextRunAt) > now) continue;
      claims.push(this.#fireUnawaited(schedule.id));
    }
    await Promise.all(claims);
  }

  /**
   * Fires the schedule without waiting for its answer: resolves once its prompt is stored, or
   * the firing ended before (another worker's claim, a budget, a failure).
   */
  #fireUnawaited(scheduleId: string): Promise<void> {
    return new Promise((stored) => {
      this.#fire(scheduleId, stored)
        .catch((error: unknown) => this.#report(error))
        .finally(stored);
    });
  }

  list(): Promise<ScheduleRecord[]> {
    return this.#options.store.listSchedules();
  }

  /** Validates the cron pattern (see `nextCronRun`), stores and arms the schedule. */
  async add(schedule: NewSchedule): Promise<ScheduleRecord> {
    const nextRun = nextCronRun(schedule.cron);
    const record = await this.#options.store.insertSchedule(schedule, nextRun.toISOString());
    this.#arm(record);
    await this.#announce(record.id);
    return record;
  }

  /**
   * Runs a paused schedule again, its failure count cleared. Null when there
   * is no such schedule; a schedule that is not paused is left as it is.
   */
  async resume(scheduleId: string): Promise<ScheduleRecord | null> {
    const schedule = await this.#options.store.getSchedule(scheduleId);
    if (!schedule?.paused) return schedule;
    const probe = new Cron(schedule.cron, { paused: true });
    const nextRun = probe.nextRun();
    probe.stop();
    const resumed = await this.#options.store.updateSchedule(scheduleId, {
      paused: false,
      consecutiveFailures: 0,
      nextRunAt: nextRun ? nextRun.toISOString() : null,
    });
    if (resumed) {
      this.#arm(resumed);
      await this.#announce(scheduleId);
    }
    return resumed;
  }

  /** False when there is no such schedule. */
  async remove(scheduleId: string): Promise<boolean> {
    this.#disarm(scheduleId);
    const deleted = await this.#options.store.deleteSchedule(scheduleId);
    if (deleted) await this.#announce(scheduleId);
    return deleted;
  }

  /**
   * Another worker created, changed or deleted the schedule: arms it here as the store has
   * it now, or disarms it when it is gone or paused.
   */
  refresh(scheduleId: string): Promise<void> {
    return this.#serially(async () => {
      const schedule = await this.#options.store.getSchedule(scheduleId);
      if (!schedule || schedule.paused) this.#disarm(scheduleId);
      else if (!this.#jobs.has(scheduleId)) this.#arm(schedule);
    });
  }

  /** Arms and disarms every schedule as the store has it (announcements may have been missed). */
  refreshAll(): Promise<void> {
    return this.#serially(async () => {
      const schedules = await this.#options.store.listSchedules();
      const active = new Set(schedules.filter((each) => !each.paused).map((each) => each.id));
      for (const id of [...this.#jobs.keys()]) if (!active.has(id)) this.#disarm(id);
      for (const schedule of schedules) {
        if (active.has(schedule.id) && !this.#jobs.has(schedule.id)) this.#arm(schedule);
      }
    });
  }

  #serially(work: () => Promise<void>): Promise<void> {
    const next = this.#refreshing.then(work).catch((error: unknown) => {
      this.#options.logger?.(`gateway: could not read a changed schedule: ${String(error)}`);
    });
    this.#refreshing = next;
    return next;
  }

  /** Tells the other workers; a failure is logged (they arm it at their next restart). */
  async #announce(scheduleId: string): Promise<void> {
    await this.#options.cluster?.announce(scheduleId).catch((error: unknown) => {
      this.#options.logger?.(
        `gateway: could not tell the other workers about schedule ${scheduleId}: ${String(error)}`,
      );
    });
  }

  #disarm(scheduleId: string): void {
    this.#jobs.get(scheduleId)?.stop();
    this.#jobs.delete(scheduleId);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const job of this.#jobs.values()) job.stop();
    this.#jobs.clear();
  }

  #arm(schedule: ScheduleRecord): void {
    if (this.#stopped) return;
    this.#disarm(schedule.id);
    const job = new Cron(
      schedule.cron,
      { protect: true, unref: true, catch: (error: unknown) => this.#report(error) },
      () => this.#fire(schedule.id),
    );
    this.#jobs.set(schedule.id, job);
  }

  #report(error: unknown): void {
    // A firing missed while the store is down: its health logs the outage once.
    if (this.#stopped || isStoreUnavailable(error)) return;
    this.#options.logger?.(`gateway: schedule firing failed: ${String(error)}`);
  }

  /** `stored` is called once the firing's prompt is delivered (stored, routed or forwarded). */
  async #fire(scheduleId: string, stored?: () => void): Promise<void> {
    const { store, router } = this.#options;
    const schedule = await store.getSchedule(scheduleId);
    if (!schedule || schedule.paused || this.#stopped) return;
    const nextRun = this.#jobs.get(scheduleId)?.nextRun() ?? null;
    const cluster = this.#options.cluster;
    if (cluster) {
      const dueAt = schedule.nextRunAt;
      const next = nextRun ? nextRun.toISOString() : null;
      if (dueAt === null || !(await cluster.claimFiring(scheduleId, dueAt, next, new Date()))) {
        return;
      }
    } else {
      await store.updateSchedule(scheduleId, {
        lastRunAt: new Date().toISOString(),
        nextRunAt: nextRun ? nextRun.toISOString() : null,
      });
    }
    const held = await this.#options.budget?.check(schedule.channelId);
    if (held) {
      // Its `lastError` says why, so that `rudder schedule list` and the API show it.
      const why = scheduleHeldText(held);
      await this.#pause(schedule, `paused itself: ${why}`, "by a budget", why);
      return;
    }
    let error: string | null = null;
    try {
      const source = `schedule:${schedule.id}`;
      const delivery = await (cluster ?? router).deliver(
        schedule.channelId,
        schedule.prompt,
        source,
      );
      stored?.();
      // Forwarded (or stored while stopping): the channel's owner, another worker (or the next
      // start), answers it and keeps no count here.
      if (delivery.disposition === "forwarded" || delivery.disposition === "stored") return;
      const settled = await router.settled(delivery.id);
      if (settled.state === "failed") error = settled.reply.text;
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    if (this.#stopped) return;
    if (error === null) {
      await store.updateSchedule(scheduleId, { consecutiveFailures: 0, lastError: null });
      return;
    }
    const current = await store.getSchedule(scheduleId);
    if (!current) return;
    const failures = current.consecutiveFailures + 1;
    const pause = failures >= MAX_CONSECUTIVE_FAILURES;
    await store.updateSchedule(scheduleId, {
      consecutiveFailures: failures,
      lastError: error,
      ...(pause ? { paused: true } : {}),
    });
    if (pause) {
      await this.#pause(
        { ...current, paused: true },
        `paused itself after ${failures} failures in a row. Last error: ${error}`,
        `after ${failures} failures`,
      );
    }
  }

  /**
   * Pauses the schedule (if not yet), and says why in its channel (`why`) and the log, and in
   * its `lastError` when given.
   */
  async #pause(
    schedule: ScheduleRecord,
    why: string,
    logged: string,
    lastError?: string,
  ): Promise<void> {
    if (!schedule.paused || lastError !== undefined) {
      await this.#options.store.updateSchedule(schedule.id, {
        paused: true,
        ...(lastError === undefined ? {} : { lastError }),
      });
    }
    this.#disarm(schedule.id);
    await this.#announce(schedule.id);
    const notice = await this.#options.store.insertSystemMessage(
      schedule.channelId,
      `Schedule ${schedule.id} ("${schedule.cron}") ${why}`,
    );
    this.#options.logger?.(`gateway: schedule ${schedule.id} paused ${logged}`);
    this.#options.bus.publish({
      type: "error",
      message: storedMessage(notice),
      channelId: notice.channelId,
    });
  }
}
