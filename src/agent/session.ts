import { randomUUID } from "node:crypto";
import { BackgroundManager } from "../background/background-manager.js";
import { emptyUsage, type Message } from "../model/types.js";
import { type AgentLoopDependencies, runAgentLoop } from "./agent-loop.js";
import { appendUserText } from "./conversation.js";
import type { AgentEvent, TurnOutcome } from "./events.js";
import { Inbox } from "./inbox.js";

export interface SessionOptions
  extends Omit<AgentLoopDependencies, "emit" | "signal" | "inbox" | "background" | "sessionId"> {
  sessionId?: string;
  history?: Message[];
  background?: BackgroundManager;
  /** Called after every change to the history, so it can be persisted as the turn goes. */
  onHistoryChange?: (history: readonly Message[]) => void;
}

type Listener = (event: AgentEvent) => void;

/**
 * A conversation with the agent: its history, an inbox that steers the
 * running turn, and the background tasks it started. At most one turn runs
 * at a time; text sent during a turn joins it at its next model call.
 */
export class Session {
  readonly id: string;
  readonly history: Message[];
  readonly inbox = new Inbox();
  readonly background: BackgroundManager;
  readonly #options: SessionOptions;
  readonly #listeners = new Set<Listener>();
  #turn: { promise: Promise<TurnOutcome>; controller: AbortController } | undefined;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.id = options.sessionId ?? randomUUID();
    this.history = options.history ?? [];
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

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(event: AgentEvent): void {
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
  send(text: string, signal?: AbortSignal): Promise<TurnOutcome> {
    if (this.#turn !== undefined) {
      this.inbox.push(text);
      return this.#turn.promise;
    }
    return this.#startTurn(text, signal);
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

  #startTurn(text: string | undefined, signal?: AbortSignal): Promise<TurnOutcome> {
    const controller = new AbortController();
    const turnSignal = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
    const promise = this.#runTurn(text, turnSignal).finally(() => {
      this.#turn = undefined;
    });
    this.#turn = { promise, controller };
    return promise;
  }

  async #runTurn(text: string | undefined, signal: AbortSignal): Promise<TurnOutcome> {
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
      appendUserText(this.history, text);
      for (const context of hook?.additionalContext ?? []) appendUserText(this.history, context);
    }
    const dependencies: AgentLoopDependencies = {
      ...this.#options,
      sessionId: this.id,
      inbox: this.inbox,
      background: this.background,
      emit,
      signal,
    };
    // The loop returns only with an empty inbox, and this turn stays marked
    // as running until the same microtask chain ends, so no steer is lost.
    return runAgentLoop(this.history, dependencies);
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
  }
}
