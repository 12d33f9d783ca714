/**
 * What `/status` says of a channel (typed in any channel, or `GET /api/channels/:id/status`):
 * its binding, folder, engine, model, sandbox on or off, how full its context is, and its
 * spend; and what `/model` says and does. The text is the same for the page, Telegram and HTTP.
 */
import type { ContextUsage } from "../agents/context-usage.js";
import { tokenCount } from "../routing/channel-command.js";
import type { WorktreeStatus } from "../worktrees/channel-worktrees.js";
import type { BindingInfo, ChannelAgentInfo } from "./binding-info.js";

/** A channel's spend against its limits; null until budgets are counted (issue 27's budgets). */
export type ChannelSpend = Record<string, unknown> | null;

export interface ChannelStatus extends ChannelAgentInfo {
  channelId: string;
  context: ContextUsage | null;
  /** The models `/model` may choose for this channel; null: any name. */
  models: string[] | null;
  spend: ChannelSpend;
  /** The channel's own worktree (`"isolation": "worktree"`), where its agent works; else null. */
  worktree: WorktreeStatus | null;
}

/** What `/status` and `/model` need besides the router's state. */
export interface ChannelFacts {
  info: BindingInfo;
  /** The channel's spend for `/status` (budgets provide it); absent: not counted yet. */
  spend?: (channelId: string) => Promise<ChannelSpend>;
  /** The channel's worktree and its state, when it has one. */
  worktree?: (channelId: string) => Promise<WorktreeStatus | null>;
}

export async function channelStatus(
  facts: ChannelFacts,
  channelId: string,
  context: ContextUsage | null,
): Promise<ChannelStatus> {
  const agents = await facts.info.forChannel(channelId);
  const binding = facts.info.bindings.bindingFor(channelId);
  const models =
    binding.models === undefined
      ? null
      : [binding.model, ...binding.models].filter((name): name is string => name !== undefined);
  // Budgets (ws-budget) plug in here: without `spend` the status says spend is not counted.
  const spend = (await facts.spend?.(channelId)) ?? null;
  const worktree = (await facts.worktree?.(channelId)) ?? null;
  return { channelId, ...agents, context, models, spend, worktree };
}

function contextLine(context: ContextUsage | null): string {
  if (context === null) return "Context: nothing yet";
  if (context.window === null) return `Context: ${tokenCount(context.tokens)} tokens`;
  const share = Math.round((context.tokens / context.window) * 100);
  return `Context: ${tokenCount(context.tokens)} of ${tokenCount(context.window)} tokens (${share}%)`;
}

function spendLine(spend: ChannelSpend): string {
  if (spend === null) return "Spend: not counted (no budgets)";
  // Budgets give their own text (`channelSpend`): today, this month, each limit in force.
  if (typeof spend.text === "string") return `Spend: ${spend.text}`;
  return `Spend: ${JSON.stringify(spend)}`;
}

function folderLine(status: ChannelStatus): string {
  const worktree = status.worktree;
  if (worktree === null) return `Folder: ${status.cwd}`;
  const state = worktree.state === "dirty" ? `${worktree.changes} uncommitted` : "clean";
  return `Folder: ${worktree.path} (worktree of ${status.cwd}, branch ${worktree.branch}, ${state})`;
}

/** The status as the channel reads it, one fact a line. */
export function statusText(status: ChannelStatus): string {
  return [
    `Binding: ${status.binding}`,
    folderLine(status),
    `Engine: ${status.engine}`,
    `Model: ${status.model}${status.models === null ? "" : ` (may be: ${status.models.join(", ")})`}`,
    `Sandbox: ${status.sandbox ? "on" : "off"}`,
    contextLine(status.context),
    spendLine(status.spend),
  ].join("\n");
}

/**
 * `/model <name>`: the channel's model from its next turn (its agent is made again between
 * turns, resuming the conversation), or why its binding refuses the name. `/model` alone
 * says which model the channel uses and which it may choose.
 */
export async function switchModel(
  facts: ChannelFacts,
  channelId: string,
  model: string,
): Promise<{ ok: true; model: string; text: string } | { ok: false; error: string }> {
  const { bindings, models } = facts.info;
  const binding = bindings.bindingFor(channelId);
  if (model === "") {
    const now = await facts.info.forChannel(channelId);
    const choices =
      binding.models === undefined
        ? "any model"
        : [binding.model, ...binding.models].filter((name) => name !== undefined).join(", ");
    return {
      ok: true,
      model: now.model,
      text: `Model: ${now.model}. This channel may use ${choices}.`,
    };
  }
  const refused = models.choose(channelId, binding, model);
  if (refused !== null) return { ok: false, error: refused };
  return { ok: true, model, text: `Model: ${model} from the next turn on.` };
}
