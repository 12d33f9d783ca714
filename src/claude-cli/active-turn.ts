import { imageBlocks } from "./attached-images.js";
import type { ClaudeChild } from "./claude-child.js";
import type { RunTurnOptions } from "./claude-process-types.js";
import { userLine } from "./stream-lines.js";
import type { TurnOutcome } from "./turn-outcome.js";
import type { TurnResult } from "./turn-result.js";
import { TurnState } from "./turn-state.js";

export interface ActiveTurnHooks {
  timeoutMs: number;
  onTimeout(turn: ActiveTurn): void;
  onAbort(): void;
  /** Called once, synchronously, before the caller's promise settles. */
  onSettled(turn: ActiveTurn): void;
}

/**
 * One `runTurn` in flight: the messages written into it, the child answering it, its timer and
 * abort listener, and the promise the caller awaits. Settles exactly once.
 */
export class ActiveTurn {
  readonly state = new TurnState();
  readonly options: RunTurnOptions;
  readonly result: Promise<TurnResult>;
  /** Resolves when the turn has settled, whichever way. */
  readonly done: Promise<void>;
  child: ClaudeChild;
  /** The CLI's running cost total when the turn started on `child`. */
  costBefore: number;
  /** Set once the turn's fate is sealed, so a later exit or result does not settle it. */
  closing: "timeout" | "stop" | "lost_line" | undefined;
  /** The session `--resume` could not find, seen in this turn's result. */
  missingSession: string | undefined;
  /** Set when the turn had to start a new session; prefixed to its result text. */
  freshStartNote: string | undefined;
  /** A result was handed out before the turn ended (`onAnswered`). */
  answeredEarly = false;
  readonly #hooks: ActiveTurnHooks;
  readonly #onAbort: () => void;
  #timer: NodeJS.Timeout | undefined;
  #settled = false;
  #resolve: (result: TurnResult) => void = () => {};
  #reject: (error: Error) => void = () => {};
  #markDone: () => void = () => {};

  constructor(
    child: ClaudeChild,
    options: RunTurnOptions,
    costBefore: number,
    hooks: ActiveTurnHooks,
  ) {
    this.child = child;
    this.options = options;
    this.costBefore = costBefore;
    this.#hooks = hooks;
    this.#onAbort = () => hooks.onAbort();
    this.result = new Promise<TurnResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.done = new Promise<void>((resolve) => {
      this.#markDone = resolve;
    });
  }

  /** Arms the timeout and the abort signal. */
  start(): void {
    this.#timer = setTimeout(() => this.#hooks.onTimeout(this), this.#hooks.timeoutMs);
    const signal = this.options.signal;
    if (signal?.aborted) this.#onAbort();
    else signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  /**
   * `--resume` named `missing`, a session the CLI does not know: the turn moves to `child`, a
   * new session, and its messages are written there again; the reply will say so.
   */
  startFresh(child: ClaudeChild, missing: string, cwd: string | undefined): void {
    this.missingSession = undefined;
    this.freshStartNote = `(The earlier conversation ${missing} could not be resumed, so this reply starts a new conversation.)`;
    this.child = child;
    this.costBefore = 0;
    for (const { uuid, text, images } of this.state.messages()) {
      child.write(userLine(text, uuid, false, imageBlocks(images, cwd))).catch(() => {});
    }
  }

  settle(outcome: TurnOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.options.signal?.removeEventListener("abort", this.#onAbort);
    this.#hooks.onSettled(this);
    this.#markDone();
    if ("error" in outcome) this.#reject(outcome.error);
    else this.#resolve(outcome.result);
  }
}
