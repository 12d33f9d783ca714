import type { AcquiredProcess, ProcessPool } from "../agents/agent-process.js";
import {
  type CompactBoundary,
  type ContextUsage,
  type ContextUsageTracker,
  compactBoundaryOf,
} from "../agents/context-usage.js";
import {
  type ChannelFacts,
  type ChannelStatus,
  channelStatus,
  statusText,
  switchModel,
} from "../bindings/channel-status.js";
import type { BudgetGuard } from "../budgets/budget-guard.js";
import type { EventBus } from "../event-bus.js";
import type { StoredMessage } from "../events.js";
import type { GatewayStore, MessageRecord } from "../store/store.js";
import type { ChannelWorktrees, WorktreeRemoval } from "../worktrees/channel-worktrees.js";
import { type ChannelCommand, tokenCount } from "./channel-command.js";
import { type Settlements, storedMessage } from "./settlements.js";
import { TurnEvents } from "./turn-events.js";
import { classifyTurnError, errorText } from "./turn-failure.js";

/** What `/compact` did: the tokens before and after, of the window. */
export interface Compacted {
  command: "compact";
  preTokens: number | null;
  postTokens: number | null;
  contextWindow: number | null;
  sessionId: string | null;
}

/** What `/clear` did: the conversation that was left (its transcript stays), and the worktree. */
export interface Reset {
  command: "reset";
  previousSessionId: string | null;
  /** What became of the channel's worktree, when its binding gives it one. */
  worktree?: WorktreeRemoval;
}

/** What `/status` found. */
export interface Status {
  command: "status";
  status: ChannelStatus;
}

/** What `/model` did: the channel's model from its next turn. */
export interface ModelSwitch {
  command: "model";
  model: string;
}

/**
 * A command's outcome: done (with the divider stored for it; `/status` and `/model` store
 * their answer only when typed as a message), or why not.
 */
export type CommandOutcome =
  | ((Compacted | Reset) & { ok: true; message: StoredMessage })
  | ((Status | ModelSwitch) & { ok: true; message: StoredMessage | null })
  | { ok: false; command: ChannelCommand["name"]; status: 400 | 409 | 502; error: string };

type Done = Compacted | Reset;
type Failed = Extract<CommandOutcome, { ok: false }>;

/** The channel as a command sees it (the router's state). */
export interface CommandChannel {
  id: string;
  sessionId: string | null;
  context: ContextUsageTracker;
}

export interface ChannelCommandsOptions {
  store: GatewayStore;
  pool: ProcessPool;
  bus: EventBus;
  settlements: Settlements;
  turnTimeoutMs?: number | undefined;
  /** What `/status` and `/model` read and change; without it they are refused. */
  facts?: ChannelFacts | undefined;
  onSession: (channelId: string, sessionId: string) => void;
  worktrees?: ChannelWorktrees | undefined;
  /** Counts and stores what a `/compact` cost (its summary is a model call). */
  budget?: BudgetGuard | undefined;
  /**
   * The channel's process for `/compact`: at once when the pool has room, else once its turn
   * among the channels waiting for one comes (`--max-agents`); null when the router closed.
   * Without it, the pool's now or never.
   */
  acquire?: (channel: CommandChannel) => Promise<AcquiredProcess | null>;
  /**
   * Resolves when a process that is not running may be started (`AgentStarts`); false when the
   * router closed meanwhile, and nothing may be started.
   */
  mayStart?: () => Promise<boolean>;
}

/**
 * Carries out `/compact [focus]` and `/clear` on a channel whose agent is idle (the router
 * queues them). `/compact` goes to the agent as the message `/compact <focus>`, which
 * Claude Code and rudder's stream-json child both answer with a `compact_boundary` line and
 * a `result`; `/clear` stops the agent and forgets its session, so the next message starts
 * a new conversation (the old transcript stays on disk). Each command leaves a divider in
 * the channel's messages; nothing stored before it is changed.
 */
export class ChannelCommands {
  readonly #options: ChannelCommandsOptions;

  constructor(options: ChannelCommandsOptions) {
    this.#options = options;
  }

  /** Runs the command and writes its divider (answering `typed`, the message that said it). */
  async run(
    channel: CommandChannel,
    command: ChannelCommand,
    typed: MessageRecord | undefined,
  ): Promise<CommandOutcome> {
    if (command.name === "status" || command.name === "model") {
      return this.#about(channel, command, typed);
    }
    const outcome =
      command.name === "compact"
        ? await this.#compact(channel, command.instructions)
        : await this.#reset(channel, command.confirm);
    const { settlements, store, bus } = this.#options;
    if ("ok" in outcome) {
      if (typed)
        await settlements.settle([typed], "failed", { kind: "error", text: outcome.error });
      return outcome;
    }
    const text = dividerText(outcome, command);
    const kind = outcome.command === "compact" ? "compaction" : "reset";
    const answer = typed ? await settlements.settle([typed], "answered", { kind, text }) : null;
    let message = answer;
    if (message === null) {
      message = storedMessage(await store.insertSystemMessage(channel.id, text, kind));
      bus.publish({ type: "notice", message, channelId: channel.id });
    }
    return { ...outcome, ok: true, message };
  }

  /**
   * Follows a turn's (or a wake-up's) lines: stores how full the context is after each
   * result (with the turn's answer, see `Settlements.noteContext`), and a divider for a
   * compaction the agent made on its own. Returns the store work to track, or null when
   * there is none.
   */
  observe(channel: CommandChannel, line: unknown): Promise<void> | null {
    const { store, bus, settlements } = this.#options;
    const usage = channel.context.accept(line);
    if (usage !== null) {
      bus.publish({ type: "context_usage", usage, channelId: channel.id });
      settlements.noteContext(channel.id, usage);
      return null;
    }
    const boundary = compactBoundaryOf(line);
    if (boundary === null || boundary.trigger !== "auto") return null;
    const done: Compacted = {
      command: "compact",
      preTokens: boundary.preTokens,
      postTokens: boundary.postTokens,
      contextWindow: null,
      sessionId: channel.sessionId,
    };
    const text = dividerText(done, { name: "compact", instructions: "" }).replace(
      "Context compacted",
      "Context compacted automatically",
    );
    return store.insertSystemMessage(channel.id, text, "compaction").then((record) => {
      bus.publish({ type: "notice", message: storedMessage(record), channelId: channel.id });
    });
  }

  /** `/status` and `/model`: answered at once, whatever the agent is doing. */
  async #about(
    channel: CommandChannel,
    command: Extract<ChannelCommand, { name: "status" | "model" }>,
    typed: MessageRecord | undefined,
  ): Promise<CommandOutcome> {
    const { facts, settlements, store } = this.#options;
    const refuse = async (status: 400 | 409, error: string): Promise<CommandOutcome> => {
      if (typed) await settlements.settle([typed], "failed", { kind: "error", text: error });
      return { ok: false, command: command.name, status, error };
    };
    if (facts === undefined) return refuse(409, `/${command.name} is not available here`);
    const answer = (text: string) =>
      typed ? settlements.settle([typed], "answered", { kind: "reply", text }) : null;
    if (command.name === "status") {
      const context = (await store.getChannel(channel.id))?.context ?? null;
      const status = await channelStatus(facts, channel.id, context);
      return { ok: true, command: "status", status, message: await answer(statusText(status)) };
    }
    const switched = await switchModel(facts, channel.id, command.model);
    if (!switched.ok) return refuse(400, switched.error);
    return {
      ok: true,
      command: "model",
      model: switched.model,
      message: await answer(switched.text),
    };
  }

  async #compact(channel: CommandChannel, instructions: string): Promise<Done | Failed> {
    const failed = (status: 409 | 502, error: string): Failed => ({
      ok: false,
      command: "compact",
      status,
      error,
    });
    if (channel.sessionId === null) {
      return failed(409, "nothing to compact: the channel has no conversation yet");
    }
    const { pool, bus } = this.#options;
    const acquired = this.#options.acquire
      ? await this.#options.acquire(channel)
      : pool.acquire(channel.id, channel.sessionId);
    if (acquired === null) return failed(502, "no agent process is free to compact; try again");
    const { process, oneShot } = acquired;
    // Started like a turn's process: one start per turn of the loop, after messages being stored.
    if (!process.alive() && this.#options.mayStart && !(await this.#options.mayStart())) {
      if (oneShot) await pool.releaseOneShot(process);
      return failed(502, "the gateway is shutting down; compact again once it is back");
    }
    let boundary: CompactBoundary | null = null;
    let usage: ContextUsage | null = null;
    // The compaction's own lines are not the channel's turn: only its divider is shown.
    const events = new TurnEvents(
      channel.id,
      () => {},
      (sessionId) => this.#options.onSession(channel.id, sessionId),
      (line) => {
        boundary ??= compactBoundaryOf(line);
        usage = channel.context.accept(line) ?? usage;
      },
    );
    try {
      const prompt = instructions === "" ? "/compact" : `/compact ${instructions}`;
      const result = await process.runTurn(prompt, {
        ...events.options(this.#options.turnTimeoutMs),
        command: true,
      });
      await this.#options.budget?.record(channel.id, "compact", {
        costUsd: result.costUsd ?? 0,
        usage: result.usage,
      });
      if (result.isError) {
        return failed(502, `the agent could not compact: ${result.result || result.subtype}`);
      }
      const found = boundary as CompactBoundary | null;
      if (found === null) {
        return failed(
          502,
          "the agent answered without compacting (does its engine know /compact?)",
        );
      }
      const settled = usage as ContextUsage | null;
      const postTokens = found.postTokens ?? settled?.tokens ?? null;
      const after =
        postTokens === null ? null : { tokens: postTokens, window: settled?.window ?? null };
      await this.#options.settlements.storeContext(channel.id, after);
      bus.publish({ type: "context_usage", usage: after, channelId: channel.id });
      return {
        command: "compact",
        preTokens: found.preTokens,
        postTokens,
        contextWindow: settled?.window ?? null,
        sessionId: result.sessionId ?? null,
      };
    } catch (error) {
      return failed(502, `the agent could not compact: ${errorText(classifyTurnError(error))}`);
    } finally {
      if (oneShot) await pool.releaseOneShot(process);
    }
  }

  async #reset(channel: CommandChannel, confirm: boolean): Promise<Done | Failed> {
    const { pool, store, bus, settlements, worktrees } = this.#options;
    const previousSessionId = channel.sessionId;
    // Uncommitted work in the worktree is never lost without a person's yes: nothing is done.
    const pending = confirm ? null : await worktrees?.uncommitted(channel.id);
    if (pending) {
      return {
        ok: false,
        command: "reset",
        status: 409,
        error:
          `needs confirmation: the channel's worktree ${pending.path} has ${pending.changes} ` +
          "uncommitted path(s), which a reset deletes. Commit them first, or send /clear confirm " +
          '(POST /api/channels/:id/reset {"confirm": true}) to delete them.',
      };
    }
    await pool.forget(channel.id);
    // The agent is stopped: nothing writes in the worktree while it goes.
    const worktree = await worktrees?.remove(channel.id, confirm);
    await store.setChannelSession(channel.id, null);
    // No channel resumes it now: its stored transcript goes (on a store down now, the periodic
    // prune of unused sessions deletes it later).
    if (previousSessionId !== null) await store.forgetTranscript(previousSessionId).catch(() => 0);
    await settlements.storeContext(channel.id, null);
    bus.publish({ type: "context_usage", usage: null, channelId: channel.id });
    return { command: "reset", previousSessionId, ...(worktree ? { worktree } : {}) };
  }
}

function dividerText(
  done: Done,
  command: Extract<ChannelCommand, { name: "compact" | "reset" }>,
): string {
  if (done.command === "reset") {
    const conversation =
      done.previousSessionId === null
        ? "New conversation."
        : `New conversation. The previous one (session ${done.previousSessionId}) stays on disk.`;
    return `${conversation}${worktreeText(done.worktree)}`;
  }
  const focus =
    command.name === "compact" && command.instructions !== ""
      ? ` (focus: ${command.instructions})`
      : "";
  const before = done.preTokens === null ? null : tokenCount(done.preTokens);
  const after = done.postTokens === null ? null : tokenCount(done.postTokens);
  const sizes =
    before !== null && after !== null
      ? `: ${before} -> ${after} tokens`
      : before !== null
        ? ` (was ${before} tokens)`
        : "";
  return `Context compacted${sizes}${focus}.`;
}

/** The divider's words on the channel's worktree, if it had one. */
function worktreeText(removal: WorktreeRemoval | undefined): string {
  if (removal === undefined) return "";
  if (removal.removed) {
    return removal.branchKept
      ? ` Its worktree was removed; branch ${removal.branch} is kept (not merged).`
      : ` Its worktree was removed, and its branch ${removal.branch} (merged) deleted.`;
  }
  if (removal.reason === "none") return "";
  if (removal.reason === "needs_confirmation") {
    return ` Its worktree ${removal.path} is kept: it has uncommitted work.`;
  }
  return ` Its worktree ${removal.path} could not be removed: ${removal.error}`;
}
