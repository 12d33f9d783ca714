import { performance } from "node:perf_hooks";
import { ClaudeProcess, type ClaudeProcessOptions } from "../../claude-cli/claude-process.js";
import type { PermissionHandler, PermissionRequest } from "../../claude-cli/permission-request.js";
import { RunnerRegistry } from "../../claude-cli/runner-registry.js";
import type { AgentProcess, ProcessPool, RunnerInfo } from "./agent-process.js";

export interface RegistryPoolOptions {
  maxLive: number;
  idleMinutes: number;
  processOptions: ClaudeProcessOptions;
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
 * finds the registry full.
 */
export class RegistryProcessPool implements ProcessPool {
  readonly registry: RunnerRegistry;
  readonly #processOptions: (channelId: string) => ClaudeProcessOptions;
  readonly #oneShots = new Set<ClaudeProcess>();

  constructor(options: RegistryPoolOptions) {
    const { onIdleLine, onPermissionRequest } = options;
    this.#processOptions = (channelId) => ({
      ...options.processOptions,
      ...(onIdleLine ? { onIdleLine: (line) => onIdleLine(channelId, line) } : {}),
      ...(onPermissionRequest
        ? { onPermissionRequest: (request) => onPermissionRequest(channelId, request) }
        : {}),
    });
    const log = options.logger ?? ((line: string) => process.stderr.write(`${line}\n`));
    this.registry = new RunnerRegistry({
      maxLive: options.maxLive,
      idleMinutes: options.idleMinutes,
      processOptions: this.#processOptions,
      logger: { warn: log },
    });
  }

  get(channelId: string, sessionId: string | null): AgentProcess | null {
    return this.registry.get(channelId, { sessionId });
  }

  oneShot(channelId: string, sessionId: string | null): AgentProcess {
    const process = new ClaudeProcess(channelId, {
      ...this.#processOptions(channelId),
      ...(sessionId ? { sessionId } : {}),
    });
    this.#oneShots.add(process);
    return process;
  }

  async releaseOneShot(process: AgentProcess): Promise<void> {
    this.#oneShots.delete(process as ClaudeProcess);
    await process.stop();
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
