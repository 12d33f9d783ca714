/**
 * What the router needs of an agent process: the shape of `ClaudeProcess`
 * (src/claude-cli, issue 3), restated structurally so that routing depends on
 * behaviour, not on how processes are made. `process-pool.ts` provides them
 * from the real `RunnerRegistry` and `ClaudeProcess`.
 */
export interface AgentTurnResult {
  result: string;
  sessionId: string | null | undefined;
  usage: unknown;
  totalCostUsd: number | null | undefined;
  costUsd?: number | null | undefined;
  durationMs: number | null | undefined;
  numTurns: number | null | undefined;
  subtype: string | null | undefined;
  isError: boolean;
}

export interface AgentSteerOutcome {
  status: "steered" | "ran_as_turn" | "process_dead";
  turn?: AgentTurnResult | undefined;
}

export interface AgentTurnOptions {
  onText?: (text: string) => void;
  /** Every parsed stdout line of the child, when the process offers it. */
  onEvent?: (line: unknown) => void;
  timeoutMs?: number;
  /** The text is a command for the agent's CLI (`/compact`), sent unfenced. */
  command?: boolean;
  /**
   * The images that came with the message (its stored `attachments` of kind `image`): files of
   * the agent's folder, shown to the model after the text.
   */
  images?: ReadonlyArray<{ path: string; mediaType: string }>;
  /**
   * Called once the agent has started on this message (its first sign of having read it); for
   * `steer()` also when the message is steered into the turn in flight.
   */
  onStarted?: () => void;
  /**
   * Takes this message's own answer while other messages of its turn are still open (the
   * agent queued a message written mid-turn as a turn of its own, answered by a later result),
   * which the turn's result then leaves out. Not called for the turn's last result or an
   * error.
   */
  onAnswered?: (result: AgentTurnResult) => void;
}

export interface AgentProcess {
  readonly pid: number | null | undefined;
  readonly inflight: boolean;
  readonly sessionId: string | null | undefined;
  /** Resolves with the turn (errors as `isError`); throws only on timeout or rate limit. */
  runTurn(text: string, options?: AgentTurnOptions): Promise<AgentTurnResult>;
  /** Options apply when the steer finds no turn in flight and runs its own. */
  steer(text: string, options?: AgentTurnOptions): Promise<AgentSteerOutcome>;
  popPendingSteers(): string[];
  /**
   * Stops the turn in flight (a `control_request` interrupt, which both engines answer); the
   * process lives on and the turn resolves with its error result. Nothing when idle.
   */
  interrupt(): Promise<void>;
  alive(): boolean;
  stop(): Promise<void>;
}

/** One live (or one-shot) agent process, as `GET /api/runners` lists it. */
export interface RunnerInfo {
  channelId: string;
  pid: number | null;
  inflight: boolean;
  /** When it was last active (its last turn ended); null while a turn is in flight. */
  idleSince: string | null;
  sessionId: string | null;
  oneShot: boolean;
  /** Resident memory of its whole process tree, in bytes (`GET /api/runners`); null when unknown. */
  rssBytes?: number | null;
}

/** A process for a channel's turn: its kept one, or a one-shot for this turn only. */
export interface AcquiredProcess {
  process: AgentProcess;
  /** Handed to `releaseOneShot` when the turn ends. */
  oneShot: boolean;
}

/**
 * Where the router gets processes: the registry's kept ones, or one-shot ones past `maxLive`;
 * all of them together at most `maxAgents`.
 */
export interface ProcessPool {
  /** Whether `acquire` would give the channel a process now (it has a kept one, or room). */
  hasRoom(channelId: string): boolean;
  /** Why `hasRoom` says no (the memory floor, `--max-agents`), for the log; undefined when it says yes. */
  shortage?(channelId: string): string | undefined;
  /**
   * The channel's kept process (created if `maxLive` allows), else a fresh one-shot process;
   * null at the `maxAgents` cap (the caller waits for `watchRoom`).
   */
  acquire(channelId: string, sessionId: string | null): AcquiredProcess | null;
  releaseOneShot(process: AgentProcess): Promise<void>;
  /**
   * Stops idle kept processes of channels `evictable` allows (idle longest first) until
   * `wanted` are on their way out, so that waiting channels get their slots once they are gone;
   * below the memory floor at least one, whoever waits.
   */
  makeRoom(evictable: (channelId: string) => boolean, wanted: number): void;
  /** `listener` is called each time an agent process is gone and its slot free. */
  watchRoom(listener: () => void): void;
  list(): RunnerInfo[];
  /** `list()` with `rssBytes` measured. */
  listMeasured?(): Promise<RunnerInfo[]>;
  /** Stops the channel's running processes (kept and one-shot); false when none runs. */
  stop(channelId: string): Promise<boolean>;
  /** Stops the channel's kept process and forgets its session (a new conversation next). */
  forget(channelId: string): Promise<void>;
  stopAll(): Promise<void>;
}

/** How a thrown turn failure is handled; see `classifyTurnError`. */
export type TurnFailure =
  | { kind: "rate_limit"; resetAt: Date | undefined; message: string }
  | { kind: "timeout"; message: string }
  | { kind: "crash"; message: string };
