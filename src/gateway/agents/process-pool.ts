import { performance } from "node:perf_hooks";
import { ClaudeProcess, type ClaudeProcessOptions } from "../../claude-cli/claude-process.js";
import type { PermissionHandler, PermissionRequest } from "../../claude-cli/permission-request.js";
import { RunnerRegistry } from "../../claude-cli/runner-registry.js";
import type { AcquiredProcess, AgentProcess, ProcessPool, RunnerInfo } from "./agent-process.js";
import type { ChannelAgents } from "./channel-agents.js";
import { withChannelPrompt } from "./channel-prompt.js";

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
  logger?: (line: string) => void;
  /** What a channel's process says between turns (see `ClaudeProcessOptions.onIdleLine`). */
  onIdleLine?: (channelId: string, line: Record<string, unknown>) => void;
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
  readonly #log: (line: string) => void;

  constructor(options: RegistryPoolOptions) {
    this.maxAgents = Math.max(1, options.maxAgents ?? DEFAULT_MAX_AGENTS);
    const { onIdleLine, onPermissionRequest, agents } = options;
    this.#agents = agents;
    this.#processOptions = (channelId) => {
      const own = agents?.options(channelId) ?? options.processOptions;
      return {
        niceness: AGENT_NICENESS,
        ...options.processOptions,
        ...own,
        extraArgs: withChannelPrompt(own.extraArgs ?? [], channelId),
        ...(onIdleLine ? { onIdleLine: (line) => onIdleLine(channelId, line) } : {}),
        ...(onPermissionRequest
          ? { onPermissionRequest: (request) => onPermissionRequest(channelId, request) }
          : {}),
      };
    };
    const log = options.logger ?? ((line: string) => process.stderr.write(`${line}\n`));
    this.#log = log;
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
    return this.#kept(channelId) || this.count() < this.maxAgents;
  }

  acquire(channelId: string, sessionId: string | null): AcquiredProcess | null {
    if (!this.hasRoom(channelId)) return null;
    this.#restartIfRemade(channelId);
    const kept = this.#withinShare(channelId) ? this.registry.get(channelId, { sessionId }) : null;
    if (kept) {
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
    while (stopping < wanted && this.registry.evictIdle(evictable)) stopping += 1;
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

  #kept(channelId: string): boolean {
    return this.registry.has(channelId);
  }

  #roomFreed(): void {
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

  async stop(channelId: string): Promise<boolean> {
    const entry = this.registry.entries().find(([id]) => id === channelId);
    const process = entry?.[1];
    if (!process || !(process.inflight || process.alive())) return false;
    return this.registry.stop(channelId);
  }

  async forget(channelId: string): Promise<void> {
    await this.registry.forget(channelId);
  }

  async stopAll(): Promise<void> {
    const oneShots = [...this.#oneShots].map((process) => process.stop());
    await Promise.allSettled([this.registry.close(), ...oneShots]);
  }
}
