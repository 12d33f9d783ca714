import { BackgroundManager } from "../background/background-manager.js";
import { contextWindowFor, maxOutputTokensFor } from "../model/context-window.js";
import { costUsd } from "../model/pricing.js";
import { emptyUsage, type ImageBlock, type Message, type Usage } from "../model/types.js";
import { type AgentLoopDependencies, runAgentLoop, toolSpecs } from "./agent-loop.js";
import type { CompactionBoundary } from "./compaction-boundary.js";
import { type ContextBudget, contextBudget } from "./context-budget.js";
import { ContextKeeper, type RequestShape } from "./context-keeper.js";
import { appendUserImages, appendUserText } from "./conversation.js";
import type { AgentEvent, TurnOutcome } from "./events.js";
import { Inbox } from "./inbox.js";
import { randomUUID } from "./random-uuid.js";
import { RedeliveredTexts } from "./redelivered-texts.js";
import { RunningTools, type ToolKill } from "./running-tools.js";

export interface SessionOptions
  extends Omit<
    AgentLoopDependencies,
    "emit" | "signal" | "inbox" | "background" | "sessionId" | "context" | "spentUsd"
  > {
  sessionId?: string;
  history?: Message[];
  background?: BackgroundManager;
  /**
   * The window and compaction budgets, or a function of the model's name (they then follow a
   * model switch); default the model's window, auto compaction on.
   */
  contextBudget?: ContextBudget | ((model: string) => ContextBudget);
  /** The user's texts a stored boundary carried (a resumed, compacted session). */
  compactedUserTexts?: string[];
  /** Called after every change to the history, so it can be persisted as the turn goes. */
  onHistoryChange?: (history: readonly Message[]) => void;
  /** Called when a compaction has replaced the history (the transcript records a boundary). */
  onCompaction?: (boundary: CompactionBoundary, history: readonly Message[]) => void;
  /** Called when `/clear` started a new conversation under `sessionId`. */
  onClear?: (sessionId: string) => void;
  /**
   * Called (synchronously) when rudder, on its way out, kills the process trees of tools this
   * session is running, so the transcript can say when (see `RunningTools`).
   */
  onToolsKilled?: (kill: ToolKill) => void;
}

type Listener = (event: AgentEvent) => void;

/**
 * A conversation with the agent: its history, an inbox that steers the
 * running turn, and the background tasks it started. At most one turn runs
 * at a time; text sent during a turn joins it at its next model call.
 */
export class Session {
  #id: string;
  readonly history: Message[];
  readonly context: ContextKeeper;
  readonly inbox = new Inbox();
  readonly background: BackgroundManager;
  readonly #options: SessionOptions;
  readonly #listeners = new Set<Listener>();
  readonly #runningTools: RunningTools | undefined;
  #turn: { promise: Promise<TurnOutcome>; controller: AbortController } | undefined;
  readonly #redelivered: RedeliveredTexts;
  /** What this session's turns and commands cost so far (for `maxBudgetUsd`). */
  #spentUsd = 0;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.#id = options.sessionId ?? randomUUID();
    this.history = options.history ?? [];
    this.#redelivered = new RedeliveredTexts(options.history);
    if (options.onToolsKilled) this.#runningTools = new RunningTools(options.onToolsKilled);
    const { model } = options;
    this.context = new ContextKeeper(
      model,
      options.contextBudget ??
        ((name: string) => contextBudget(contextWindowFor(name), maxOutputTokensFor(name))),
      options.compactedUserTexts === undefined ? {} : { userTexts: options.compactedUserTexts },
    );
    this.background = options.background ?? new BackgroundManager({ workspace: options.workspace });
    this.background.onTaskEnd((task) =>
      this.#emit({
        type: "task_end",
        taskId: task.id,
        command: task.command,
        status: task.status,
        exitCode: task.exitCode,
        summary: task.output.slice(0, 500),
      }),
    );
  }

  /** The conversation's id; `/clear` gives the session a new one. */
  get id(): string {
    return this.#id;
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(event: AgentEvent): void {
    if (event.type === "turn_end") this.#spentUsd += event.outcome.totalCostUsd;
    this.#runningTools?.observe(event);
    if (event.type === "compaction_end" && event.boundary !== undefined) {
      this.#options.onCompaction?.(event.boundary, this.history);
    }
    if (event.type === "model_end" || event.type === "tool_end" || event.type === "turn_end") {
      this.#options.onHistoryChange?.(this.history);
    }
    for (const listener of this.#listeners) listener(event);
  }

  get running(): boolean {
    return this.#turn !== undefined;
  }

  /**
   * Sends the user's text. With a turn running, the text steers it and the
   * running turn's outcome is returned; otherwise a new turn starts.
   */
  send(
    text: string,
    signal?: AbortSignal,
    images: readonly ImageBlock[] = [],
  ): Promise<TurnOutcome> {
    if (this.#turn !== undefined) {
      this.inbox.push(text, images);
      return this.#turn.promise;
    }
    return this.#startTurn(text, signal, images);
  }

  /** Aborts the running turn, killing the tools it runs. */
  abort(reason = "interrupted"): void {
    this.#turn?.controller.abort(new Error(reason));
  }

  /**
   * When background tasks are still running or undelivered, waits for them
   * and runs the model once more with their notifications. Returns undefined
   * when there was nothing to wait for. With `waitForRunning: false` it does
   * not wait: the turn starts at once with the tasks that have finished.
   */
  async wake(
    signal?: AbortSignal,
    options: { waitForRunning?: boolean } = {},
  ): Promise<TurnOutcome | undefined> {
    if (!this.background.hasPendingWork() || this.#turn !== undefined) return undefined;
    if (options.waitForRunning !== false) await this.background.waitForAll(signal);
    if (signal?.aborted || this.#turn !== undefined) return undefined;
    return this.#startTurn(undefined, signal);
  }

  #startTurn(
    text: string | undefined,
    signal?: AbortSignal,
    images: readonly ImageBlock[] = [],
  ): Promise<TurnOutcome> {
    const controller = new AbortController();
    const turnSignal = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
    const promise = this.#runTurn(text, turnSignal, images).finally(() => {
      this.#turn = undefined;
      this.#redelivered.forget();
    });
    this.#turn = { promise, controller };
    return promise;
  }

  async #runTurn(
    text: string | undefined,
    signal: AbortSignal,
    images: readonly ImageBlock[] = [],
  ): Promise<TurnOutcome> {
    const emit = (event: AgentEvent) => this.#emit(event);
    if (text !== undefined) {
      emit({ type: "turn_start", prompt: text });
      const hook = await this.#options.hooks?.run(
        {
          session_id: this.id,
          cwd: this.#options.workspace,
          hook_event_name: "UserPromptSubmit",
          prompt: text,
        },
        signal,
      );
      for (const warning of hook?.warnings ?? []) {
        emit({ type: "hook_warning", event: "UserPromptSubmit", message: warning });
      }
      if (hook?.blocked || hook?.halt !== undefined) {
        return this.#blockedPrompt(hook.reason ?? hook.halt?.reason ?? "blocked by a hook");
      }
      if (!this.#redelivered.take(text)) {
        appendUserText(this.history, text);
        appendUserImages(this.history, images);
      }
      for (const context of hook?.additionalContext ?? []) appendUserText(this.history, context);
    }
    const dependencies: AgentLoopDependencies = {
      ...this.#options,
      sessionId: this.id,
      inbox: this.inbox,
      alreadyHeld: (held) => this.#redelivered.take(held),
      background: this.background,
      context: this.context,
      spentUsd: () => this.#spentUsd,
      emit,
      signal,
    };
    // The loop returns only with an empty inbox, and this turn stays marked
    // as running until the same microtask chain ends, so no steer is lost.
    return runAgentLoop(this.history, dependencies);
  }

  /**
   * `/compact [focus]`: summarizes the conversation now (one model call, no tools), after
   * the running turn if there is one. Resolves to a turn outcome with `localCommand`.
   */
  compact(focus?: string, signal?: AbortSignal): Promise<TurnOutcome> {
    const running = this.#turn?.promise;
    if (running !== undefined) return running.then(() => this.compact(focus, signal));
    return this.#startCommand(signal, (turnSignal) => this.#runCompaction(focus, turnSignal));
  }

  /**
   * `/clear`: a new conversation under a new id, after the running turn. Background tasks are
   * stopped and forgotten; the old transcript stays where it is.
   */
  clear(): Promise<TurnOutcome> {
    const running = this.#turn?.promise;
    if (running !== undefined) return running.then(() => this.clear());
    return this.#startCommand(undefined, async () => {
      await this.background.stopAll();
      this.background.collectFinished();
      this.history.length = 0;
      this.context.reset();
      const previousSessionId = this.#id;
      this.#id = randomUUID();
      this.#options.onClear?.(this.#id);
      this.#emit({ type: "session_cleared", previousSessionId, sessionId: this.#id });
      return this.#commandOutcome("clear", "", false, emptyUsage(), 0);
    });
  }

  #startCommand(
    signal: AbortSignal | undefined,
    run: (signal: AbortSignal) => Promise<TurnOutcome>,
  ): Promise<TurnOutcome> {
    const controller = new AbortController();
    const turnSignal = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
    const promise = run(turnSignal).finally(() => {
      this.#turn = undefined;
    });
    this.#turn = { promise, controller };
    return promise;
  }

  async #runCompaction(focus: string | undefined, signal: AbortSignal): Promise<TurnOutcome> {
    const startedAt = performance.now();
    const shape: RequestShape = {
      ...(this.#options.systemPrompt === undefined ? {} : { system: this.#options.systemPrompt }),
      tools: toolSpecs(this.#options.tools),
    };
    const result = await this.context.compact(this.history, shape, "manual", {
      signal,
      emit: (event) => this.#emit(event),
      ...(focus === undefined ? {} : { focus }),
    });
    const durationMs = Math.round(performance.now() - startedAt);
    const text = result.ok ? "" : result.error;
    return this.#commandOutcome("compact", text, !result.ok, result.usage, durationMs, shape);
  }

  #commandOutcome(
    command: "compact" | "clear",
    result: string,
    isError: boolean,
    usage: Usage,
    durationMs: number,
    shape?: RequestShape,
  ): TurnOutcome {
    const outcome: TurnOutcome = {
      result,
      isError,
      subtype: isError ? "error_during_execution" : "success",
      numTurns: 0,
      durationMs,
      usage,
      totalCostUsd: costUsd(this.#options.model.name, usage),
      terminalReason: "completed",
      contextTokens:
        shape === undefined || this.history.length === 0
          ? 0
          : this.context.tokens(this.history, shape),
      contextWindow: this.context.budget.window,
      localCommand: command,
    };
    this.#emit({ type: "turn_end", outcome });
    return outcome;
  }

  #blockedPrompt(reason: string): TurnOutcome {
    const outcome: TurnOutcome = {
      result: `Prompt blocked by UserPromptSubmit hook: ${reason}`,
      isError: true,
      subtype: "prompt_blocked",
      numTurns: 0,
      durationMs: 0,
      usage: emptyUsage(),
      totalCostUsd: 0,
      terminalReason: "prompt_blocked",
    };
    this.#emit({ type: "turn_end", outcome });
    return outcome;
  }

  /** Ends the running turn and every background task. */
  async close(): Promise<void> {
    this.abort("session closed");
    await this.#turn?.promise;
    await this.background.stopAll();
    this.#runningTools?.close();
  }
}
