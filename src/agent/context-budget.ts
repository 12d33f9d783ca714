import {
  contextWindowFor,
  maxOutputTokensFor,
  parseContextWindow,
} from "../model/context-window.js";

/**
 * The token budgets of one conversation, every one a share of the window, so that a
 * 16,000-token window behaves like a 200,000-token one, only compacting more often.
 */
export interface ContextBudget {
  /** The model's context window (or the override). */
  window: number;
  /** Compact before a call whose request would pass this. */
  threshold: number;
  /** `max_tokens` of the summary call. */
  summaryMaxTokens: number;
  /** The most recent exchanges kept word for word after a compaction. */
  keepTokens: number;
  /** The user's own earlier messages carried word for word beside the summary. */
  pinnedTokens: number;
  /** False with `DISABLE_AUTO_COMPACT` or `autoCompactEnabled: false`: only `/compact` compacts. */
  auto: boolean;
}

/** Room for the reply: 10% of the window, at most what the model can write. */
const REPLY_SHARE = 0.1;
/** Slack for what the estimate misses (13,000 of 200,000 in Claude Code). */
const BUFFER_SHARE = 0.065;
const SUMMARY_SHARE = 0.08;
const SUMMARY_MAX = 20_000;
const KEEP_SHARE = 0.1;
const PINNED_SHARE = 0.04;

export function contextBudget(
  window: number,
  maxOutputTokens: number,
  options: { auto?: boolean; percentOverride?: number } = {},
): ContextBudget {
  const reply = Math.min(maxOutputTokens, Math.round(window * REPLY_SHARE));
  let threshold = window - reply - Math.round(window * BUFFER_SHARE);
  // As in Claude Code, the override can bring compaction earlier, never later.
  if (options.percentOverride !== undefined) {
    threshold = Math.min(threshold, Math.floor((window * options.percentOverride) / 100));
  }
  return {
    window,
    threshold,
    summaryMaxTokens: Math.min(SUMMARY_MAX, Math.round(window * SUMMARY_SHARE)),
    keepTokens: Math.round(window * KEEP_SHARE),
    pinnedTokens: Math.round(window * PINNED_SHARE),
    auto: options.auto ?? true,
  };
}

/**
 * `budget` for a smaller `window` (one the API said it has, refusing a request as too long):
 * every share scaled to it, the threshold no later a share of it than it was. A window no
 * smaller leaves the budget as it is.
 */
export function narrowedBudget(
  budget: ContextBudget,
  window: number,
  maxOutputTokens: number,
): ContextBudget {
  if (window >= budget.window) return budget;
  const narrowed = contextBudget(window, maxOutputTokens, { auto: budget.auto });
  const threshold = Math.floor((budget.threshold * window) / budget.window);
  return { ...narrowed, threshold: Math.min(narrowed.threshold, threshold) };
}

/** The settings keys Claude Code reads for compaction. */
export interface CompactionSettingKeys {
  autoCompactEnabled?: boolean;
  autoCompactWindow?: number;
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/**
 * The budget of `model` from the environment and settings, as Claude Code reads them:
 * `RUDDER_CONTEXT_WINDOW` (rudder's, wins) or `CLAUDE_CODE_AUTO_COMPACT_WINDOW` /
 * `autoCompactWindow` (a smaller window to compact in), `DISABLE_AUTO_COMPACT=1` or
 * `autoCompactEnabled: false`, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=<1-100>`. A value that is
 * not a number is a one-line error.
 */
export function contextBudgetFrom(
  model: string,
  env: Record<string, string | undefined>,
  settings: CompactionSettingKeys = {},
): ContextBudget | { error: string } {
  let window = contextWindowFor(model);
  const rudderWindow = env.RUDDER_CONTEXT_WINDOW?.trim();
  const claudeWindow = env.CLAUDE_CODE_AUTO_COMPACT_WINDOW?.trim();
  if (rudderWindow) {
    const parsed = parseContextWindow(rudderWindow);
    if (parsed === undefined) {
      return { error: `RUDDER_CONTEXT_WINDOW must be a number of tokens, got "${rudderWindow}"` };
    }
    window = parsed;
  } else {
    const smaller = claudeWindow ? parseContextWindow(claudeWindow) : settings.autoCompactWindow;
    if (claudeWindow && smaller === undefined) {
      return {
        error: `CLAUDE_CODE_AUTO_COMPACT_WINDOW must be a number of tokens, got "${claudeWindow}"`,
      };
    }
    if (smaller !== undefined && smaller > 0) window = Math.min(window, smaller);
  }
  const percentText = env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE?.trim();
  let percentOverride: number | undefined;
  if (percentText) {
    percentOverride = Number(percentText);
    if (!(percentOverride > 0 && percentOverride <= 100)) {
      return {
        error: `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE must be a percentage from 1 to 100, got "${percentText}"`,
      };
    }
  }
  const auto = !truthy(env.DISABLE_AUTO_COMPACT) && settings.autoCompactEnabled !== false;
  return contextBudget(window, maxOutputTokensFor(model), {
    auto,
    ...(percentOverride === undefined ? {} : { percentOverride }),
  });
}

/** The model layer's window table, for the front ends (which import only the agent's). */
export { contextWindowFor, maxOutputTokensFor } from "../model/context-window.js";
