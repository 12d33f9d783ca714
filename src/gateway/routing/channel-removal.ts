/**
 * Removing a channel (`DELETE /api/channels/:id`, `rudder channels rm`, the page's Delete).
 * Refused, with one line and nothing done, while a turn runs in it or its worktree holds
 * uncommitted work, unless forced; forced, its running turn is interrupted first. Then, once its
 * agent is idle (`Router.whenIdle`): its agent process is stopped, its worktree removed (`git
 * worktree remove`; the branch deleted when merged, else kept and said so), its schedules
 * removed (disarmed on every worker), its waiting permission requests expired, and its history,
 * transcripts and grants deleted from the store (`ChannelSettings.remove`; its spend stays
 * counted for its binding and the gateway). A new message to the same id, as from the same chat
 * of a chat source, then starts a fresh channel. With several workers the worker holding the
 * channel's lease does it: another worker refuses, naming the holder.
 */
import type { ProcessPool } from "../agents/agent-process.js";
import type { GatewayStore, ScheduleRecord } from "../store/store.js";
import type { ChannelWorktrees, WorktreeRemoval } from "../worktrees/channel-worktrees.js";
import type { Router } from "./router.js";

/** What a removal did. */
export interface RemovedChannel {
  removed: string;
  /** Messages deleted with it. */
  messages: number;
  /** Its schedules, removed with it. */
  schedules: string[];
  /** What became of its worktree; null when its binding gives it none. */
  worktree: WorktreeRemoval | null;
  /** One line saying all of it. */
  text: string;
}

export type ChannelRemovalOutcome =
  | ({ ok: true } & RemovedChannel)
  | { ok: false; status: 404 | 409 | 500; error: string };

export interface ChannelRemovalOptions {
  store: GatewayStore;
  pool: ProcessPool;
  router: Router;
  worktrees?: ChannelWorktrees | undefined;
  schedules: {
    list(): Promise<ScheduleRecord[]>;
    remove(scheduleId: string): Promise<boolean>;
  };
  permissions?: { expire(channelId: string, reason: string): void };
  /** With several workers: the channel's lease (see `ChannelOwnership`). */
  ownership?:
    | {
        holds(channelId: string): boolean;
        claim(channelId: string): Promise<boolean>;
        holder(channelId: string): Promise<{ owner: string; live: boolean } | null>;
        release(channelId: string): Promise<void>;
        readonly worker: string;
      }
    | undefined;
  /** A forced removal's turn that has not ended this long after its interrupt is killed. */
  interruptGraceMs?: number;
  logger?: (line: string) => void;
}

export class ChannelRemoval {
  readonly #options: ChannelRemovalOptions;

  constructor(options: ChannelRemovalOptions) {
    this.#options = options;
  }

  /** Removes the channel; `force` goes past a running turn and uncommitted work. */
  async remove(channelId: string, force: boolean): Promise<ChannelRemovalOutcome> {
    const { store, router, worktrees, ownership } = this.#options;
    const refuse = (status: 404 | 409 | 500, error: string): ChannelRemovalOutcome => ({
      ok: false,
      status,
      error,
    });
    if ((await store.getChannel(channelId)) === null) return refuse(404, `no channel ${channelId}`);
    if (ownership && !ownership.holds(channelId) && !(await ownership.claim(channelId))) {
      const holder = await ownership.holder(channelId);
      return refuse(
        409,
        `channel ${channelId} is driven by worker ${holder?.owner ?? "another worker"} ` +
          "(it holds the channel's lease): send the removal to that worker",
      );
    }
    if (!force && router.inflight(channelId)) {
      return refuse(
        409,
        `a turn is running in channel ${channelId}: stop it first (POST ` +
          `/api/channels/${channelId}/interrupt, the page's Stop), or remove it with force=1`,
      );
    }
    const pending = force ? null : await worktrees?.uncommitted(channelId);
    if (pending) return refuse(409, needsConfirmation(channelId, pending));
    let killer: NodeJS.Timeout | undefined;
    if (force && (await router.interrupt(channelId))) {
      killer = setTimeout(
        () => void this.#options.pool.stop(channelId).catch(() => false),
        this.#options.interruptGraceMs ?? 10_000,
      );
      killer.unref();
    }
    return router.whenIdle(channelId, () => {
      clearTimeout(killer);
      return this.#removeIdle(channelId, force);
    });
  }

  /** The removal proper, the channel's agent idle. */
  async #removeIdle(channelId: string, force: boolean): Promise<ChannelRemovalOutcome> {
    const { store, pool, router, worktrees, schedules, permissions, ownership } = this.#options;
    await pool.forget(channelId);
    // The agent is stopped: nothing writes in the worktree while it goes.
    const removal = await worktrees?.remove(channelId, force);
    const worktree =
      removal === undefined || (!removal.removed && removal.reason === "none") ? null : removal;
    if (worktree?.removed === false && worktree.reason === "needs_confirmation") {
      return { ok: false, status: 409, error: needsConfirmation(channelId, worktree) };
    }
    if (worktree?.removed === false && worktree.reason === "failed") {
      return {
        ok: false,
        status: 500,
        error: `channel ${channelId} kept: its worktree ${worktree.path} could not be removed: ${worktree.error}`,
      };
    }
    const removedSchedules: string[] = [];
    for (const schedule of await schedules.list()) {
      if (schedule.channelId !== channelId) continue;
      if (await schedules.remove(schedule.id)) removedSchedules.push(schedule.id);
    }
    permissions?.expire(channelId, "the channel was removed");
    const deleted = await store.channelSettings().remove(channelId);
    await router.removed(channelId);
    await ownership?.release(channelId).catch(() => {});
    const messages = deleted?.messages ?? 0;
    const text = removalText(channelId, messages, removedSchedules, worktree);
    this.#options.logger?.(`gateway: ${text}`);
    return { ok: true, removed: channelId, messages, schedules: removedSchedules, worktree, text };
  }
}

function needsConfirmation(channelId: string, pending: { path: string; changes: number }): string {
  return (
    `needs confirmation: channel ${channelId}'s worktree ${pending.path} has ${pending.changes} ` +
    "uncommitted path(s), which removing the channel deletes. Commit them first, or remove it " +
    "with force=1"
  );
}

function removalText(
  channelId: string,
  messages: number,
  schedules: string[],
  worktree: WorktreeRemoval | null,
): string {
  const parts = [`${messages} message(s) deleted`];
  if (schedules.length > 0) parts.push(`schedule(s) ${schedules.join(", ")} removed`);
  if (worktree?.removed) {
    parts.push(
      worktree.branchKept
        ? `worktree ${worktree.path} removed; branch ${worktree.branch} kept (not merged)`
        : `worktree ${worktree.path} and its merged branch ${worktree.branch} removed`,
    );
  }
  return `channel ${channelId} removed: ${parts.join("; ")}.`;
}
