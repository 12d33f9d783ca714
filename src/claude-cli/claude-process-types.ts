import type { AttachedImage } from "./attached-images.js";
import type { CommandOptions } from "./command.js";
import type { PermissionHandler } from "./permission-request.js";
import type { ChildSpawner, OwnedStart } from "./spawned-child.js";
import type { TurnResult } from "./turn-result.js";

export interface ClaudeProcessOptions extends CommandOptions {
  cwd?: string | undefined;
  /** A session to continue: the first spawn passes `--resume <sessionId>`. */
  sessionId?: string | undefined;
  onPermissionRequest?: PermissionHandler | undefined;
  /**
   * Asked when a rudder child run with `--ask-before-waking` would wake itself for background
   * tasks that finished after its turn: resolves with why it may not (it then waits for its
   * next message), or undefined to let it.
   */
  onWakeRequest?: (() => Promise<string | undefined>) | undefined;
  /** SIGTERM-to-SIGKILL grace when ending the process; default 3000 ms. */
  terminateGraceMs?: number | undefined;
  /**
   * Longest stdout line parsed; a longer line is reported (`output_error`) and ends the turn
   * in flight as an `output_too_long` error result. Default 16 MiB.
   */
  maxLineLength?: number | undefined;
  /**
   * Lines the child writes while no turn is in flight: a rudder child wakes
   * itself when a background task ends after its turn, and answers with a
   * turn of its own (`system/task_notification`, `assistant`, `result`). With a `result`
   * line, `costUsd`: what that turn cost (the growth of the process's running total).
   */
  onIdleLine?: ((line: Record<string, unknown>, costUsd?: number) => void) | undefined;
  /**
   * Called at once before each line is written to the child (a message, a control response,
   * an interrupt): the gateway commits what it has stored but not yet committed, so an agent
   * never acts on anything its store could still lose (a start counted, then the gateway
   * killed by what the agent does next).
   */
  beforeWrite?: (() => void) | undefined;
  /**
   * The child's scheduling niceness (Unix `nice`, 0-19), set as it starts, so its work (and
   * what it starts) yields the processor to its host's under load. Default: the host's.
   */
  niceness?: number | undefined;
  /**
   * What starts the child: default from this process (`directSpawner`); `rudder serve` passes
   * its `AgentSpawner`, so no start holds the gateway's event loop.
   */
  spawner?: ChildSpawner | undefined;
  /** Owned by a watcher rather than the parent-death signal (bubblewrap in front: `OwnedStart`). */
  owned?: OwnedStart | undefined;
  /** How errors name the engine (`rudder`, `Claude CLI`); default `Claude CLI`. */
  engineName?: string | undefined;
}

export interface RunTurnOptions {
  /** Each assistant text block, as it arrives. */
  onText?: ((text: string) => void) | undefined;
  /** Default 600000 (10 minutes). */
  timeoutMs?: number | undefined;
  /**
   * Every stream-json line of the turn (assistant, user tool results, system, control
   * requests, result), plus `{ type: "output_error", kind, message, excerpt }` for output
   * that could not be parsed.
   */
  onEvent?: ((event: Record<string, unknown>) => void) | undefined;
  /**
   * Aborting interrupts the turn (a `control_request` interrupt; the process stays). The turn
   * then resolves with the CLI's own error result for an interrupted turn.
   */
  signal?: AbortSignal | undefined;
  /**
   * The text is a command for the CLI itself (`/compact keep the API notes`), sent as it
   * is: not fenced as external content, which would hide the slash from the CLI.
   */
  command?: boolean | undefined;
  /**
   * Images that came with the message, files of the process's folder: read as the message is
   * written and sent after its text as image blocks (see `imageBlocks`).
   */
  images?: readonly AttachedImage[] | undefined;
  /**
   * Called once when the CLI has started on this message: its `command_lifecycle` `started`
   * line, or, from a CLI that sends no lifecycle lines, the first line after the message was
   * written. For `steer()` it applies whether the message is steered or runs as a turn.
   */
  onStarted?: (() => void) | undefined;
  /**
   * Takes this message's own answer as soon as the CLI gives it, while other messages of the
   * same turn are still open: the CLI queued a message written while the model streamed, so it
   * answers the two with two `result` lines. Called with the result that answered this message
   * (alone, or with messages answered by the same line, when each has an `onAnswered`), which
   * the turn's final result then leaves out, texts, usage and cost alike. Not called when the
   * turn's last result answers the message (the turn's promise carries it), nor for an error
   * result (the turn's end decides what that means). Without it, the turn's result combines
   * all of its results, as it always has.
   */
  onAnswered?: ((result: TurnResult) => void) | undefined;
}

export type SteerStatus = "steered" | "ran_as_turn" | "process_dead";

export interface SteerOutcome {
  status: SteerStatus;
  /** The turn's result for `ran_as_turn` and `process_dead`; undefined for `steered`. */
  turn: TurnResult | undefined;
}

export const DEFAULT_TURN_TIMEOUT_MS = 600_000;
