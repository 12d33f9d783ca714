import type { BackgroundManager } from "../background/background-manager.js";
import { formatNotifications } from "../background/notification.js";
import type { HookRunner } from "../hooks/types.js";
import { contextOverflowOf } from "../model/context-overflow.js";
import { costUsd } from "../model/pricing.js";
import {
  addUsage,
  type ContentBlock,
  emptyUsage,
  type Message,
  type Model,
  type ToolSpec,
  type ToolUseBlock,
  type Usage,
} from "../model/types.js";
import type { PermissionRules } from "../permissions/types.js";
import type { AnyTool } from "../tools/types.js";
import type { ContextKeeper, RequestShape } from "./context-keeper.js";
import { appendUserImages, appendUserText, awaitsUser, messageText } from "./conversation.js";
import type { AgentEventSink, TurnOutcome } from "./events.js";
import type { Inbox } from "./inbox.js";
import {
  type InterruptedWhile,
  interruptedBetweenSteps,
  recordInterruption,
} from "./interruption.js";
import { callModel } from "./model-call.js";
import type { Confirm } from "./tool-dispatch.js";
import { runToolRound } from "./tool-round.js";

/** A Stop hook may push the loop on, but only this many times in a row. */
export const MAX_STOP_CONTINUATIONS = 8;

export interface AgentLoopDependencies {
  model: Model;
  tools: readonly AnyTool[];
  rules: PermissionRules;
  workspace: string;
  /** The user's home, for `~/` permission rules. */
  home?: string;
  /** Whether bash commands run in the OS sandbox, or per command (the permission gate's posture). */
  bashSandboxed?: boolean | ((command: string) => boolean);
  /** A person can answer `confirm`: commands that destroy work ask in the sandbox too. */
  askBeforeDestroying?: boolean;
  sessionId: string;
  systemPrompt?: string;
  confirm?: Confirm;
  hooks?: HookRunner;
  background?: BackgroundManager;
  /** Steering messages; drained into the conversation before every model call. */
  inbox?: Inbox;
  /**
   * Whether a text from the inbox is already in the conversation (a message delivered again
   * after a restart, see `RedeliveredTexts`): it is then reported delivered, not added again.
   */
  alreadyHeld?: (text: string) => boolean;
  emit: AgentEventSink;
  signal: AbortSignal;
  /** Model calls allowed in one turn before it ends as `error_max_turns`. */
  maxTurns?: number;
  /**
   * US dollars the session may spend (`--max-budget-usd`): once its priced usage, earlier
   * turns (`spentUsd`) included, reaches this, the turn ends at its next model call as
   * `error_max_budget_usd`, as Claude Code's does.
   */
  maxBudgetUsd?: number;
  /** What the session's earlier turns cost, in US dollars (default 0). */
  spentUsd?: () => number;
  maxTokens?: number;
  /**
   * Keeps the conversation inside the model's window: asked before each model call, and
   * on a context-length refusal (compact, then retry the call once).
   */
  context?: ContextKeeper;
}

/** The tools as the model request lists them. */
export function toolSpecs(tools: readonly AnyTool[]): ToolSpec[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.jsonSchema,
  }));
}

/** The end of a turn whose request no longer fits, saying what the user can do. */
export function overflowMessage(apiMessage: string): string {
  return (
    `${apiMessage}. The conversation no longer fits the model's context window: ` +
    "send /compact to summarize it, or /clear to start a new conversation."
  );
}

/**
 * Moves everything waiting (steering texts, finished background tasks) into
 * the conversation as the user's.
 */
function deliverInbox(history: Message[], dependencies: AgentLoopDependencies): void {
  const texts = dependencies.inbox?.drain() ?? [];
  const finished = dependencies.background?.collectFinished() ?? [];
  for (const text of texts) {
    if (dependencies.alreadyHeld?.(text) !== true) appendUserText(history, text);
  }
  appendUserImages(history, dependencies.inbox?.drainImages() ?? []);
  if (finished.length > 0) appendUserText(history, formatNotifications(finished));
  if (texts.length === 0 && finished.length === 0) return;
  dependencies.emit({
    type: "inbox_delivered",
    texts,
    taskIds: finished.map((task) => task.id),
  });
}

/**
 * Runs one turn: calls the model, dispatches its tool calls, and repeats
 * while the reply contains `tool_use` blocks (whatever `stop_reason` says).
 * Mutates `history` in place, so the caller's conversation is the record.
 * Never rejects: model failures and aborts end the turn as an error outcome.
 */
export async function runAgentLoop(
  history: Message[],
  dependencies: AgentLoopDependencies,
): Promise<TurnOutcome> {
  const { model, emit, signal } = dependencies;
  const startedAt = performance.now();
  let usage: Usage = emptyUsage();
  let numTurns = 0;
  let lastText = "";
  let stopContinuations = 0;
  const maxTurns = dependencies.maxTurns ?? 200;
  const { context } = dependencies;
  const shape: RequestShape = {
    ...(dependencies.systemPrompt === undefined ? {} : { system: dependencies.systemPrompt }),
    tools: toolSpecs(dependencies.tools),
  };
  let recovering = false;

  const outcome = (fields: Partial<TurnOutcome> & Pick<TurnOutcome, "subtype">): TurnOutcome => {
    const result: TurnOutcome = {
      result: lastText,
      isError: false,
      numTurns,
      durationMs: Math.round(performance.now() - startedAt),
      usage,
      totalCostUsd: costUsd(model.name, usage),
      terminalReason: "completed",
      ...(context === undefined
        ? {}
        : { contextTokens: context.tokens(history, shape), contextWindow: context.budget.window }),
      ...fields,
    };
    emit({ type: "turn_end", outcome: result });
    return result;
  };

  /** Ends the turn as interrupted, leaving the history as Claude Code leaves it. */
  const interrupted = (whileDoing: InterruptedWhile, partialText = "", messageId = "") => {
    const { partial, marker } = recordInterruption(history, whileDoing, partialText);
    if (partial !== undefined) {
      emit({
        type: "model_end",
        message: partial,
        messageId: messageId || `msg_interrupted_${numTurns}`,
        usage: emptyUsage(),
      });
      lastText = partialText;
    }
    emit({ type: "interrupted", marker });
    return outcome({
      subtype: "aborted",
      isError: true,
      terminalReason: whileDoing,
      result: "Interrupted.",
    });
  };

  for (;;) {
    if (signal.aborted) {
      return interrupted(interruptedBetweenSteps(history));
    }
    deliverInbox(history, dependencies);
    if (awaitsUser(history)) return outcome({ subtype: "success" });
    if (numTurns >= maxTurns) {
      return outcome({ subtype: "error_max_turns", isError: true, terminalReason: "max_turns" });
    }
    if (overBudget(dependencies, usage)) {
      return outcome({
        subtype: "error_max_budget_usd",
        isError: true,
        terminalReason: "max_budget_usd",
        result: `Reached maximum budget ($${dependencies.maxBudgetUsd})`,
      });
    }

    // Awaited only when needed: a call that fits starts in the same tick, as before.
    if (context?.needsCompaction(history, shape) === true) {
      const fit = await context.fit(history, shape, signal, emit);
      usage = addUsage(usage, fit.usage);
      if (!fit.ok) return interrupted(interruptedBetweenSteps(history));
    }

    numTurns += 1;
    const { reply, streamed } = await callModel(history, shape, numTurns, dependencies);
    if (!reply.ok) {
      const { error } = reply;
      if (error.subtype === "aborted") {
        return interrupted("aborted_streaming", streamed.text, streamed.messageId);
      }
      const refusal = contextOverflowOf(error);
      const overflow = refusal !== undefined;
      if (refusal?.maximum !== undefined) context?.learnWindow(refusal.maximum);
      if (overflow && context?.budget.auto === true && !recovering) {
        recovering = true;
        const compacted = await context.compact(history, shape, "auto", { signal, emit });
        usage = addUsage(usage, compacted.usage);
        if (compacted.ok) {
          numTurns -= 1;
          continue;
        }
        if (compacted.aborted) return interrupted(interruptedBetweenSteps(history));
      }
      return outcome({
        subtype: error.subtype,
        isError: true,
        result: overflow ? overflowMessage(error.message) : error.message,
        terminalReason: "model_error",
        ...(error.status === undefined ? {} : { apiErrorStatus: error.status }),
        ...(error.resetAt === undefined ? {} : { resetAt: error.resetAt }),
      });
    }

    const { response } = reply;
    recovering = false;
    usage = addUsage(usage, response.usage);
    const assistant: Message = { role: "assistant", content: response.content };
    history.push(assistant);
    context?.observe(history, response.usage);
    emit({ type: "model_end", message: assistant, messageId: response.id, usage: response.usage });
    const text = messageText(assistant);
    if (text !== "") lastText = text;

    const toolUses = response.content.filter(
      (block: ContentBlock): block is ToolUseBlock => block.type === "tool_use",
    );
    if (toolUses.length === 0) {
      const continuation = await runStopHook(dependencies, stopContinuations > 0);
      if (continuation !== undefined && stopContinuations < MAX_STOP_CONTINUATIONS) {
        stopContinuations += 1;
        appendUserText(history, continuation);
        continue;
      }
      if (dependencies.inbox !== undefined && dependencies.inbox.size > 0) continue;
      return outcome({ subtype: "success" });
    }
    stopContinuations = 0;

    const { results, haltReason } = await runToolRound(toolUses, dependencies);
    history.push({ role: "user", content: results });
    if (haltReason !== undefined) {
      return outcome({
        subtype: "success",
        terminalReason: "hook_stopped",
        result: `Stopped by a hook${haltReason ? `: ${haltReason}` : "."}`,
      });
    }
  }
}

/** Whether the session's priced usage, this turn's `usage` included, reached `maxBudgetUsd`. */
function overBudget(dependencies: AgentLoopDependencies, usage: Usage): boolean {
  const budget = dependencies.maxBudgetUsd;
  if (budget === undefined) return false;
  return (dependencies.spentUsd?.() ?? 0) + costUsd(dependencies.model.name, usage) >= budget;
}

/** Returns the text to continue with when a Stop hook blocks the stop. */
async function runStopHook(
  dependencies: AgentLoopDependencies,
  stopHookActive: boolean,
): Promise<string | undefined> {
  if (dependencies.hooks === undefined) return undefined;
  const outcome = await dependencies.hooks.run(
    {
      session_id: dependencies.sessionId,
      cwd: dependencies.workspace,
      hook_event_name: "Stop",
      stop_hook_active: stopHookActive,
    },
    dependencies.signal,
  );
  for (const warning of outcome.warnings) {
    dependencies.emit({ type: "hook_warning", event: "Stop", message: warning });
  }
  if (!outcome.blocked || outcome.halt !== undefined) return undefined;
  return `Stop hook feedback: ${outcome.reason ?? "continue working"}`;
}
