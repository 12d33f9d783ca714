import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { ActiveTurn } from "./active-turn.js";
import { imageBlocks } from "./attached-images.js";
import { type ChildExit, ClaudeChild } from "./claude-child.js";
import {
  type ClaudeProcessOptions,
  DEFAULT_TURN_TIMEOUT_MS,
  type RunTurnOptions,
  type SteerOutcome,
} from "./claude-process-types.js";
import { buildChildEnvironment, buildClaudeCommand, resolveClaudeBin } from "./command.js";
import { ControlChannel } from "./control-channel.js";
import { ClaudeTimeoutError } from "./errors.js";
import { type HeldPrompts, heldPromptsOf } from "./held-prompts.js";
import { DEFAULT_MAX_LINE_LENGTH, type NdjsonError } from "./ndjson.js";
import { isRateLimitLine } from "./rate-limit.js";
import { assistantTexts, isMissingSession, saysMissingSession, userLine } from "./stream-lines.js";
import {
  answerOf,
  completedOutcome,
  describeDroppedLine,
  describeExit,
  describeLineTooLong,
  failedOutcome,
  type OutcomeContext,
} from "./turn-outcome.js";
import type { TurnResult } from "./turn-result.js";

const DEFAULT_GRACE_MS = 3000;

/**
 * One long-lived Claude Code CLI for one channel, driven over stream-json. Turns are not
 * concurrent: `runTurn` while one is in flight is a programmer error; use `steer`.
 *
 * Failures are data: a crashed or stopped child, or an error result, resolves `runTurn` with
 * `isError: true`. Only a timeout (`ClaudeTimeoutError`) and a rate limit (`RateLimitError`)
 * reject, because callers branch on them.
 */
export class ClaudeProcess {
  readonly channelId: string;
  readonly options: ClaudeProcessOptions;
  /** True while a turn runs. Read by the registry's reaper; not used to decide anything here. */
  inflight = false;
  /** `performance.now()` (monotonic milliseconds) of the last turn start, steer or turn end. */
  lastActive = performance.now();
  #sessionId: string | null;
  #child: ClaudeChild | undefined;
  #everSpawned = false;
  #turn: ActiveTurn | undefined;
  #pendingSteers: string[] = [];
  #lifecycleSeen = false;
  /** The line being skipped passed the cap while no turn was in flight. */
  #droppedWhileIdle = false;
  #costTotal = 0;
  /** Of a child resumed on a Claude Code session: the prompts it holds, until a turn ends. */
  #held: HeldPrompts | undefined;
  readonly #control = new ControlChannel(
    () => this.options.onPermissionRequest,
    () => this.options.onWakeRequest,
  );

  constructor(channelId: string, options: ClaudeProcessOptions = {}) {
    this.channelId = channelId;
    this.options = options;
    this.#sessionId = options.sessionId ?? null;
  }

  get sessionId(): string | null {
    return this.#sessionId;
  }

  /** Pid of the current (or last) child; undefined before the first spawn. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  alive(): boolean {
    return this.#child?.alive() ?? false;
  }

  buildCommand(): string[] {
    return buildClaudeCommand(this.options, this.#sessionId);
  }

  /** The last (at most 50) stderr lines of the current or last child. */
  stderrTail(): string[] {
    return this.#child?.stderrTail.lines() ?? [];
  }

  /** Texts steered into turns that then failed, handed out once for re-dispatch. */
  popPendingSteers(): string[] {
    const pending = this.#pendingSteers;
    this.#pendingSteers = [];
    return pending;
  }

  async runTurn(text: string, options: RunTurnOptions = {}): Promise<TurnResult> {
    if (this.#turn) {
      throw new Error(`a turn is already in flight on channel ${this.channelId}; use steer()`);
    }
    const child = this.alive() && this.#child ? this.#child : this.#spawn();
    const timeoutMs = options.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS;
    const turn = new ActiveTurn(child, options, this.#costTotal, {
      timeoutMs,
      onTimeout: (timedOut) => this.#onTimeout(timedOut, timeoutMs),
      onAbort: () => void this.interrupt(),
      onSettled: (settled) => {
        if (this.#turn !== settled) return;
        this.#turn = undefined;
        this.#held?.forget();
        this.inflight = false;
        this.lastActive = performance.now();
      },
    });
    this.#turn = turn;
    this.inflight = true;
    this.lastActive = performance.now();
    turn.start();
    this.#sendMessage(turn, randomUUID(), text, options.command === true);
    return turn.result;
  }

  /**
   * Delivers a message to the channel's Claude. With a turn in flight it is written into that
   * turn (`steered`), which then resolves only once this message is answered too. Otherwise
   * it runs as a turn of its own: `ran_as_turn`, or `process_dead` when the process had died
   * (a failed write, EPIPE, counts as dead) and was started again.
   */
  async steer(text: string, options: RunTurnOptions = {}): Promise<SteerOutcome> {
    const turn = this.#turn;
    if (turn && turn.closing === undefined && this.alive()) {
      const uuid = randomUUID();
      turn.state.addMessage(uuid, text, true, options);
      this.lastActive = performance.now();
      try {
        await turn.child.write(this.#lineFor(text, uuid, false, options.images));
        return { status: "steered", turn: undefined };
      } catch {
        // EPIPE: the child can no longer read its input, so it is as good as dead. Ending
        // it settles the turn in flight (as a crash) before this text runs on a new one.
        turn.state.removeMessage(uuid);
        await turn.child.terminate(this.#graceMs());
      }
    }
    while (this.#turn) await this.#turn.done;
    const dead = this.#everSpawned && !this.alive();
    const result = await this.runTurn(text, options);
    return { status: dead ? "process_dead" : "ran_as_turn", turn: result };
  }

  /** Asks the CLI to stop the turn in flight; resolves when it acknowledged (or after 5 s). */
  async interrupt(): Promise<void> {
    const child = this.#child;
    if (child?.alive()) await this.#control.interrupt(child);
  }

  /**
   * Ends the process and everything it started. A turn in flight resolves as a
   * `process_stopped` error result; its steered texts go to `popPendingSteers()`.
   */
  async stop(): Promise<void> {
    const turn = this.#turn;
    if (turn && turn.closing === undefined) turn.closing = "stop";
    await this.#child?.terminate(this.#graceMs());
    if (turn?.closing === "stop")
      this.#failTurn(turn, "process_stopped", `${this.#engineName()} was stopped.`);
  }

  #engineName(): string {
    return this.options.engineName ?? "Claude CLI";
  }

  #graceMs(): number {
    return this.options.terminateGraceMs ?? DEFAULT_GRACE_MS;
  }

  #spawn(): ClaudeChild {
    const env = buildChildEnvironment(this.options);
    this.#held = heldPromptsOf(this.#sessionId, env, this.options.cwd);
    const child: ClaudeChild = new ClaudeChild(
      this.buildCommand(),
      {
        cwd: this.options.cwd,
        env,
        niceness: this.options.niceness,
        owned: this.options.owned,
        spawner: this.options.spawner,
      },
      {
        onLine: (line) => {
          if (this.#child === child) this.#onLine(line);
        },
        onOutputError: (error) => {
          if (this.#child === child) this.#onOutputError(error);
        },
        onExit: (exit) => this.#onExit(child, exit),
        beforeWrite: this.options.beforeWrite,
      },
      this.options.maxLineLength,
    );
    this.#child = child;
    this.#everSpawned = true;
    this.#lifecycleSeen = false;
    this.#costTotal = 0;
    return child;
  }

  #sendMessage(turn: ActiveTurn, uuid: string, text: string, command: boolean): void {
    turn.state.addMessage(uuid, text, false, turn.options);
    // A failed write is not reported here: the child's exit settles the turn.
    const line = this.#lineFor(text, uuid, command, turn.options.images);
    turn.child.write(line).catch(() => {});
  }

  /** The line that delivers `text`, with its images read from the child's folder now. */
  #lineFor(text: string, uuid: string, command: boolean, images: RunTurnOptions["images"]) {
    const blocks = imageBlocks(images, this.options.cwd);
    return (
      this.#held?.lineFor(text, uuid, command, blocks) ?? userLine(text, uuid, command, blocks)
    );
  }

  #onTimeout(turn: ActiveTurn, timeoutMs: number): void {
    if (this.#turn !== turn || turn.closing !== undefined) return;
    turn.closing = "timeout";
    this.#pendingSteers.push(...turn.state.unansweredSteers());
    // Reject only once the process tree is gone, so the next turn starts clean with --resume.
    void turn.child
      .terminate(this.#graceMs())
      .then(() =>
        turn.settle({ error: new ClaudeTimeoutError(timeoutMs, {}, this.#engineName()) }),
      );
  }

  #onOutputError(error: NdjsonError): void {
    const turn = this.#turn;
    if (error.kind === "line_too_long") this.#droppedWhileIdle = turn === undefined;
    if (turn && error.kind === "line_too_long") this.#endOnLostLine(turn, error);
    if (error.kind === "line_dropped" && this.#droppedWhileIdle) {
      // No turn could be ended for it: the host is told what was lost, and how much.
      this.#droppedWhileIdle = false;
      const cap = this.options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
      const message = describeDroppedLine(error, cap);
      this.options.onIdleLine?.({ type: "output_error", ...error, message });
      return;
    }
    turn?.options.onEvent?.({ type: "output_error", ...error });
  }

  /**
   * A line over the cap was dropped, so the turn can no longer be followed (its reply or its
   * `result` may be what was lost). The turn fails at once, after the process tree is gone so
   * that nothing it writes later is read as the next turn's; messages that arrive meanwhile
   * wait for it and start the next turn (`--resume`) instead of steering this one.
   */
  #endOnLostLine(turn: ActiveTurn, error: NdjsonError): void {
    if (this.#turn !== turn || turn.closing !== undefined) return;
    turn.closing = "lost_line";
    const { subtype, message } = describeLineTooLong(
      error,
      this.options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH,
    );
    void turn.child.terminate(this.#graceMs()).then(() => this.#failTurn(turn, subtype, message));
  }

  #onLine(line: Record<string, unknown>): void {
    const turn = this.#turn;
    // Without lifecycle lines, any line of the turn says the CLI has read what was written.
    if (turn && line.type !== "command_lifecycle" && !this.#lifecycleSeen) turn.state.noteStarted();
    if (turn) turn.options.onEvent?.(line);
    else if (line.type === "result" && typeof line.total_cost_usd === "number") {
      // Read before the running total below takes the line's.
      this.options.onIdleLine?.(line, Math.max(0, line.total_cost_usd - this.#costTotal));
    } else if (line.type !== "control_request" && line.type !== "control_response") {
      this.options.onIdleLine?.(line);
    }
    if (typeof line.session_id === "string" && line.type === "system" && line.subtype === "init") {
      this.#sessionId = line.session_id;
    }
    switch (line.type) {
      case "assistant":
        if (turn) this.#onAssistant(turn, line);
        return;
      case "command_lifecycle":
        this.#lifecycleSeen = true;
        if (typeof line.command_uuid === "string" && typeof line.state === "string") {
          turn?.state.noteLifecycle(line.command_uuid, line.state);
          const answered =
            turn !== undefined && (turn.state.results.length > 0 || turn.answeredEarly);
          if (answered && turn.state.complete()) this.#finishTurn(turn);
        }
        return;
      case "control_request":
        if (this.#child) this.#control.answerRequest(this.#child, line);
        return;
      case "control_response":
        this.#control.acceptResponse(line);
        return;
      case "result":
        if (typeof line.total_cost_usd === "number") this.#costTotal = line.total_cost_usd;
        if (typeof line.session_id === "string" && !isMissingSession(line)) {
          this.#sessionId = line.session_id;
        }
        if (turn) this.#onResult(turn, line);
        return;
    }
  }

  #onAssistant(turn: ActiveTurn, line: Record<string, unknown>): void {
    const message = line.message as { id?: unknown } | undefined;
    for (const text of assistantTexts(line)) {
      turn.state.intermediateCount += 1;
      turn.state.noteSaid(text, message?.id);
      turn.options.onText?.(text);
    }
  }

  #onResult(turn: ActiveTurn, line: Record<string, unknown>): void {
    if (isMissingSession(line) && this.#sessionId && turn.freshStartNote === undefined) {
      turn.missingSession = this.#sessionId;
      return;
    }
    if (!turn.state.addResult(line, this.#lifecycleSeen)) return;
    if (turn.state.complete()) this.#finishTurn(turn);
    else if (!isRateLimitLine(line)) this.#answerEarly(turn);
  }

  /** A result that answered some of the turn's messages, others still open: see `onAnswered`. */
  #answerEarly(turn: ActiveTurn): void {
    const context = this.#context(turn);
    const taken = turn.state.takeEarlyAnswer((line) => answerOf([line], turn.state, context));
    if (!taken) return;
    // What the turn's final result covers starts after this answer.
    turn.costBefore = this.#costTotal;
    turn.state.intermediateCount = 0;
    turn.answeredEarly = true;
  }

  #finishTurn(turn: ActiveTurn): void {
    if (turn.closing !== undefined) return;
    if (turn.state.results.length === 0) {
      // Every result went out early and the CLI cancelled the rest: no answer to give them,
      // so not an empty success; the cancelled steers are kept for dispatch again.
      this.#failTurn(
        turn,
        "error_during_execution",
        "The messages left in the turn were cancelled.",
      );
      return;
    }
    // Steers the CLI cancelled (after an interrupt) were never answered: keep them.
    this.#pendingSteers.push(...turn.state.unansweredSteers());
    turn.settle(completedOutcome(turn.state, this.#context(turn)));
  }

  #context(turn: ActiveTurn): OutcomeContext {
    return {
      costBefore: turn.costBefore,
      engineName: this.#engineName(),
      sessionId: this.#sessionId,
      // The note goes with the turn's first answer only.
      freshStartNote: turn.answeredEarly ? undefined : turn.freshStartNote,
    };
  }

  #onExit(child: ClaudeChild, exit: ChildExit): void {
    const turn = this.#turn;
    if (!turn || turn.child !== child || turn.closing !== undefined) return;
    const stderrSaysMissing = this.#sessionId && saysMissingSession(child.stderrTail.lines());
    const missing = turn.missingSession ?? (stderrSaysMissing ? this.#sessionId : undefined);
    if (missing && turn.freshStartNote === undefined) {
      this.#startFresh(turn, missing);
      return;
    }
    const { subtype, message } = describeExit(
      exit,
      resolveClaudeBin(this.options),
      child.stderrTail.text(),
      this.#engineName(),
    );
    this.#failTurn(turn, subtype, message);
  }

  /** `--resume` named a session the CLI does not know: start a new session, once per turn. */
  #startFresh(turn: ActiveTurn, missing: string): void {
    this.#sessionId = null;
    turn.startFresh(this.#spawn(), missing, this.options.cwd);
  }

  #failTurn(turn: ActiveTurn, subtype: string, message: string): void {
    this.#pendingSteers.push(...turn.state.unansweredSteers());
    turn.settle({ result: failedOutcome(turn.state, subtype, message, this.#context(turn)) });
  }
}
