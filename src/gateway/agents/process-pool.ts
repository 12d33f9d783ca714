import { performance } from "node:perf_hooks";
import { ClaudeProcess } from "../../claude-cli/claude-process.js";
import type { ClaudeProcessOptions } from "../../claude-cli/claude-process-types.js";
import type { PermissionHandler, PermissionRequest } from "../../claude-cli/permission-request.js";
import { RunnerRegistry } from "../../claude-cli/runner-registry.js";
import type { AcquiredProcess, AgentProcess, ProcessPool, RunnerInfo } from "./agent-process.js";
import type { ChannelAgents } from "./channel-agents.js";
import { withChannelPrompt } from "./channel-prompt.js";
import { MemoryFloor, type MemoryFloorOptions } from "./memory-floor.js";
import { ProcessMemory } from "./process-memory.js";

/** `rudder serve --max-agents`'s default: agent processes of a worker at most, one-shots included. */
export const DEFAULT_MAX_AGENTS = 16;

/**
 * The niceness of agent processes: under load the gateway's own work (taking messages, health,
 * event streams) goes first, so admission stays fast while its agents are busy.
 */
const AGENT_NICENESS = 10;

export interface RegistryPoolOptions {
  maxLive: number;
  /** Agent processes alive at most, kept and one-shot together; default `DEFAULT_MAX_AGENTS`. */
  maxAgents?: number;
  idleMinutes: number;
  /** What every agent process gets (hooks into the gateway), under `agents`' options. */
  processOptions: ClaudeProcessOptions;
  /** Each channel's process as its binding makes it now; without it every one is alike. */
  agents?: ChannelAgents;
  /** The folder a channel's agent starts in instead of its binding's (its worktree). */
  cwdFor?: (channelId: string) => string | undefined;
  /** `--min-free-memory`: below it no new process starts and idle ones are stopped. */
  memoryFloor?: Omit<MemoryFloorOptions, "onReading">;
  logger?: (line: string) => void;
  /** Whether a channel's agent may wake itself (see `ClaudeProcessOptions.onWakeRequest`). */
  onWakeRequest?: (channelId: string) => Promise<string | undefined>;
  /** What a channel's process says between turns (see `ClaudeProcessOptions.onIdleLine`). */
  onIdleLine?: (channelId: string, line: Record<string, unknown>, costUsd?: number) => void;
  /** Answers a channel's `can_use_tool` requests; without it the agent refuses what needs asking. */
  onPermissionRequest?: (
    channelId: string,
    request: PermissionRequest,
  ) => ReturnType<PermissionHandler>;
}

/** Wall-clock time of a `performance.now()` reading. */
function wallClock(monotonicMs: number): string {
  return new Date(Date.now() - (performance.now() - monotonicMs)).toISOString();
}

function describe(channelId: string, process: ClaudeProcess, oneShot: boolean): RunnerInfo {
  return {
    channelId,
    pid: process.pid ?? null,
    inflight: process.inflight,
    idleSince: process.inflight ? null : wallClock(process.lastActive),
    sessionId: process.sessionId,
    oneShot,
  };
}

/**
 * The router's processes: a `RunnerRegistry` keeps one per channel (at most `maxLive`,
 * resuming the channel's stored session), and a one-shot process answers a channel that
 * finds the registry full. All of them together are at most `maxAgents`: past it `acquire`
 * gives nothing, and the router's waiting channels are told (`watchRoom`) when one is gone.
 */
export class RegistryProcessPool implements ProcessPool {
  readonly registry: RunnerRegistry;
  readonly maxAgents: number;
  readonly #processOptions: (channelId: string) => ClaudeProcessOptions;
  readonly #oneShots = new Set<ClaudeProcess>();
  readonly #roomWatchers: Array<() => void> = [];
  readonly #agents: ChannelAgents | undefined;
  /** Of each channel's kept process: the binding it was made for and how (`ChannelAgents.key`). */
  readonly #madeAs = new Map<string, { key: string; binding: string }>();
  readonly #memory = new ProcessMemory();
  readonly #floor: MemoryFloor | undefined;
  readonly #log: (line: string) => void;

  constructor(options: RegistryPoolOptions) {
    this.maxAgents = Math.max(1, options.maxAgents ?? DEFAULT_MAX_AGENTS);
    const { onIdleLine, onPermissionRequest, onWakeRequest, agents, cwdFor } = options;
    this.#agents = agents;
    this.#processOptions = (channelId) => {
      const own = agents?.options(channelId) ?? options.processOptions;
      return {
        niceness: AGENT_NICENESS,
        ...options.processOptions,
        ...own,
        ...(cwdFor?.(channelId) === undefined ? {} : { cwd: cwdFor(channelId) }),
        extraArgs: withChannelPrompt(own.extraArgs ?? [], channelId),
        ...(onIdleLine
          ? { onIdleLine: (line, costUsd) => onIdleLine(channelId, line, costUsd) }
          : {}),
        ...(onPermissionRequest
          ? { onPermissionRequest: (request) => onPermissionRequest(channelId, request) }
          : {}),
        ...(onWakeRequest ? { onWakeRequest: () => onWakeRequest(channelId) } : {}),
      };
    };
    const log = options.logger ?? ((line: string) => process.stderr.write(`${line}\n`));
    this.#log = log;
    this.#floor =
      options.memoryFloor === undefined
        ? undefined
        : new MemoryFloor({ ...options.memoryFloor, onReading: () => this.#notifyRoom() });
    this.registry = new RunnerRegistry({
      maxLive: options.maxLive,
      idleMinutes: options.idleMinutes,
      processOptions: this.#processOptions,
      logger: { warn: log },
      onFreed: () => this.#roomFreed(),
    });
  }

  /** Every agent process that may be alive now: kept, being stopped, and one-shot. */
  count(): number {
    return this.registry.total() + this.#oneShots.size;
  }

  hasRoom(channelId: string): boolean {
    const kept = this.registry.entries().find(([id]) => id === channelId)?.[1];
    // A running kept process needs no more memory; any process to be started does.
    if (kept !== undefined && (kept.alive() || kept.inflight)) return true;
    if (this.#floor?.short()) return false;
    return kept !== undefined || this.count() < this.maxAgents;
  }

  /** Why a channel without a running process waits now, or undefined when it need not. */
  shortage(channelId: string): string | undefined {
    if (this.hasRoom(channelId)) return undefined;
    if (this.#floor?.short()) return this.#floor.describe();
    return `all ${this.maxAgents} agent processes are busy (--max-agents)`;
  }

  acquire(channelId: string, sessionId: string | null): AcquiredProcess | null {
    if (!this.hasRoom(channelId)) return null;
    this.#restartIfRemade(channelId);
    const kept = this.#withinShare(channelId) ? this.registry.get(channelId, { sessionId }) : null;
    if (kept) {
      // Taken for a turn: not idle, though nothing is sent to it until the turn's start comes
      // (the agent cap's line may hold it), so the reaper must not stop it meanwhile.
      kept.lastActive = performance.now();
      if (!this.#madeAs.has(channelId) && this.#agents) {
        const share = this.#agents.share(channelId);
        this.#madeAs.set(channelId, { key: this.#agents.key(channelId), binding: share.name });
      }
      return { process: kept, oneShot: false };
    }
    const process = new ClaudeProcess(channelId, {
      ...this.#processOptions(channelId),
      ...(sessionId ? { sessionId } : {}),
    });
    this.#oneShots.add(process);
    return { process, oneShot: true };
  }

  async releaseOneShot(process: AgentProcess): Promise<void> {
    try {
      await process.stop();
    } finally {
      this.#oneShots.delete(process as ClaudeProcess);
      this.#roomFreed();
    }
  }

  makeRoom(evictable: (channelId: string) => boolean, wanted: number): void {
    let stopping = this.registry.stopping();
    const short = this.#floor?.short() === true;
    // Short of memory, idle agents go one at a time (least recently used first) until it is not.
    const goal = short ? Math.max(wanted, 1) : wanted;
    while (stopping < goal) {
      const stopped = this.registry.evictIdle(evictable);
      if (stopped === undefined) break;
      if (short) {
        this.#log(
          `gateway: ${this.#floor?.describe()}: stopping the idle agent of channel ${stopped} (least recently used)`,
        );
      }
      stopping += 1;
    }
  }

  watchRoom(listener: () => void): void {
    this.#roomWatchers.push(listener);
  }

  /**
   * Stops the channel's kept process when its binding (or `/model`) would now make it another
   * way and it is between turns: the channel's next process is made the new way and resumes
   * its session. One in a turn keeps its settings until the turn ends.
   */
  #restartIfRemade(channelId: string): void {
    const made = this.#madeAs.get(channelId);
    if (made === undefined || this.#agents === undefined) return;
    if (!this.registry.has(channelId)) {
      this.#madeAs.delete(channelId);
      return;
    }
    if (made.key === this.#agents.key(channelId)) return;
    if (!this.registry.evictIdle((id) => id === channelId)) return;
    this.#madeAs.delete(channelId);
    this.#log(`gateway: ${channelId}'s agent restarts: its binding or model changed`);
  }

  /** Whether the channel may keep a process: it has one, or its binding's share has room. */
  #withinShare(channelId: string): boolean {
    if (this.registry.has(channelId) || this.#agents === undefined) return true;
    const { name, maxLive } = this.#agents.share(channelId);
    if (maxLive === undefined) return true;
    let kept = 0;
    for (const [id, made] of this.#madeAs) {
      if (!this.registry.has(id)) this.#madeAs.delete(id);
      else if (made.binding === name) kept += 1;
    }
    return kept < maxLive;
  }

  #roomFreed(): void {
    // Memory a stopped agent gave back shows in the next reading: read it before deciding.
    if (this.#floor === undefined) this.#notifyRoom();
    else void this.#floor.check().finally(() => this.#notifyRoom());
  }

  #notifyRoom(): void {
    for (const listener of this.#roomWatchers) listener();
  }

  /** Processes that are running: spawned and alive, or in a turn. */
  list(): RunnerInfo[] {
    const kept = this.registry
      .entries()
      .filter(([, process]) => process.inflight || process.alive())
      .map(([channelId, process]) => describe(channelId, process, false));
    const oneShots = [...this.#oneShots]
      .filter((process) => process.inflight || process.alive())
      .map((process) => describe(process.channelId, process, true));
    return [...kept, ...oneShots];
  }

  /** `list()` with each process tree's resident memory (`rssBytes`). */
  async listMeasured(): Promise<RunnerInfo[]> {
    const runners = this.list();
    const pids = runners.flatMap((runner) => (runner.pid === null ? [] : [runner.pid]));
    const sizes = await this.#memory.measure(pids);
    return runners.map((runner) => ({
      ...runner,
      rssBytes: runner.pid === null ? null : (sizes.get(runner.pid) ?? null),
    }));
  }

  async stop(channelId: string): Promise<boolean> {
    const running = (process: ClaudeProcess) => process.inflight || process.alive();
    const kept = this.registry.entries().find(([id]) => id === channelId)?.[1];
    // A one-shot's turn ends as stopped, and its own `releaseOneShot` frees its slot.
    const oneShots = [...this.#oneShots].filter(
      (process) => process.channelId === channelId && running(process),
    );
    const stops = oneShots.map((process) => process.stop().then(() => true));
    if (kept !== undefined && running(kept)) stops.push(this.registry.stop(channelId));
    return (await Promise.all(stops)).some(Boolean);
  }

  async forget(channelId: string): Promise<void> {
    await this.registry.forget(channelId);
  }

  async stopAll(): Promise<void> {
    this.#floor?.stop();
    const oneShots = [...this.#oneShots].map((process) => process.stop());
    await Promise.allSettled([this.registry.close(), ...oneShots]);
  }
}
