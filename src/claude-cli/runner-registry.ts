import { performance } from "node:perf_hooks";
import { ClaudeProcess } from "./claude-process.js";
import type { ClaudeProcessOptions } from "./claude-process-types.js";

export interface RegistryLogger {
  warn(message: string): void;
}

export interface RunnerRegistryOptions {
  /** Most processes alive at once; at the cap a new channel gets `null`. `<= 0` disables. */
  maxLive: number;
  /** Processes idle (not in flight) longer than this are stopped by the reaper. */
  idleMinutes: number;
  /** Options for the processes the registry creates, the same for all or per channel. */
  processOptions?: ClaudeProcessOptions | ((channelId: string) => ClaudeProcessOptions);
  /** Default `console`. */
  logger?: RegistryLogger;
  /** How often the reaper runs; default a quarter of `idleMinutes`, between 1 s and 60 s. */
  reapIntervalMs?: number;
  /** Called each time a process the registry stopped (reaped, stopped, evicted) is gone. */
  onFreed?: () => void;
}

/**
 * One `ClaudeProcess` per channel, at most `maxLive` of them. A channel whose process was
 * reaped gets a new one that resumes the same Claude session. Creation is lazy (the child is
 * spawned by the first turn) and `get` is synchronous, so two calls for a new channel can
 * never create two processes. At the cap a new channel gets `null` and runs one-shot; nobody
 * is evicted, and a channel that has a process always gets it back.
 */
export class RunnerRegistry {
  readonly maxLive: number;
  readonly idleMinutes: number;
  readonly #processOptions: RunnerRegistryOptions["processOptions"];
  /** Session ids of channels whose process was reaped or stopped, resumed by the next one. */
  readonly #sessions = new Map<string, string>();
  readonly #logger: RegistryLogger;
  readonly #processes = new Map<string, ClaudeProcess>();
  readonly #reaper: NodeJS.Timeout | undefined;
  /** Processes taken out of the registry whose stop has not finished: they may still be alive. */
  #stopping = 0;
  readonly #onFreed: (() => void) | undefined;

  constructor(options: RunnerRegistryOptions) {
    this.maxLive = options.maxLive;
    this.idleMinutes = options.idleMinutes;
    this.#processOptions = options.processOptions;
    this.#logger = options.logger ?? console;
    this.#onFreed = options.onFreed;
    if (this.maxLive <= 0) {
      this.#logger.warn(
        `RunnerRegistry: maxLive is ${this.maxLive} (<= 0), so persistent Claude processes are off and every channel runs one-shot`,
      );
      return;
    }
    const interval =
      options.reapIntervalMs ?? Math.min(60_000, Math.max(1000, (this.idleMinutes * 60_000) / 4));
    this.#reaper = setInterval(() => void this.reapOnce(), interval);
    this.#reaper.unref();
  }

  /**
   * The channel's process, created (not yet spawned) if there is room. `sessionId` is the
   * session a newly created process resumes (a restarted host knows it from its store); it
   * is ignored when the channel already has a process.
   */
  get(channelId: string, options: { sessionId?: string | null } = {}): ClaudeProcess | null {
    const existing = this.#processes.get(channelId);
    if (existing) return existing;
    if (this.maxLive <= 0 || this.#processes.size >= this.maxLive) return null;
    const base =
      typeof this.#processOptions === "function"
        ? this.#processOptions(channelId)
        : (this.#processOptions ?? {});
    const sessionId = options.sessionId ?? base.sessionId ?? this.#sessions.get(channelId);
    const created = new ClaudeProcess(channelId, { ...base, sessionId });
    this.#processes.set(channelId, created);
    return created;
  }

  /** Puts an existing process under this registry (it is stopped by `stopAll` and the reaper). */
  adopt(channelId: string, runner: ClaudeProcess): void {
    this.#processes.set(channelId, runner);
  }

  /** The channels and their processes, in creation order. */
  entries(): [channelId: string, process: ClaudeProcess][] {
    return [...this.#processes];
  }

  /** Whether the channel has a process here. */
  has(channelId: string): boolean {
    return this.#processes.has(channelId);
  }

  liveCount(): number {
    return this.#processes.size;
  }

  /** The kept processes and those being stopped: every child this registry may have alive. */
  total(): number {
    return this.#processes.size + this.#stopping;
  }

  /** Processes taken out whose stop has not finished yet. */
  stopping(): number {
    return this.#stopping;
  }

  /**
   * Stops the process that has been idle longest among the channels `evictable` allows (never
   * one in flight), freeing its slot once it is gone (`onFreed`); its session is resumed by
   * the channel's next process. Returns the channel whose process it stopped, or undefined
   * when none could be chosen.
   */
  evictIdle(evictable: (channelId: string) => boolean): string | undefined {
    let chosen: [string, ClaudeProcess] | undefined;
    for (const entry of this.#processes) {
      const [channelId, runner] = entry;
      if (runner.inflight || !evictable(channelId)) continue;
      if (chosen === undefined || runner.lastActive < chosen[1].lastActive) chosen = entry;
    }
    if (chosen === undefined) return undefined;
    this.#processes.delete(chosen[0]);
    void this.#stopQuietly(chosen[0], chosen[1]);
    return chosen[0];
  }

  /**
   * Stops every process idle longer than `idleMinutes`, never one in flight. Bookkeeping is
   * removed before stopping, and a `stop()` that throws is logged, never propagated.
   * Resolves to the number of processes reaped.
   */
  async reapOnce(): Promise<number> {
    const cutoff = performance.now() - this.idleMinutes * 60_000;
    const idle = [...this.#processes].filter(
      ([, runner]) => !runner.inflight && runner.lastActive < cutoff,
    );
    for (const [channelId] of idle) this.#processes.delete(channelId);
    await Promise.all(idle.map(([channelId, runner]) => this.#stopQuietly(channelId, runner)));
    return idle.length;
  }

  /**
   * Stops one channel's process and frees its slot (its session is resumed by
   * the channel's next process). False when the channel has none.
   */
  async stop(channelId: string): Promise<boolean> {
    const runner = this.#processes.get(channelId);
    if (runner === undefined) return false;
    this.#processes.delete(channelId);
    await this.#stopQuietly(channelId, runner);
    return true;
  }

  /**
   * Stops the channel's process (if any) and forgets its session, so the channel's next
   * process starts a new conversation instead of resuming the old one.
   */
  async forget(channelId: string): Promise<void> {
    await this.stop(channelId);
    this.#sessions.delete(channelId);
  }

  /** Stops every process and forgets them; resolves once none is alive. */
  async stopAll(): Promise<void> {
    const all = [...this.#processes];
    this.#processes.clear();
    await Promise.all(all.map(([channelId, runner]) => this.#stopQuietly(channelId, runner)));
  }

  /** `stopAll` and no more reaping: the registry is finished. */
  async close(): Promise<void> {
    clearInterval(this.#reaper);
    await this.stopAll();
  }

  async #stopQuietly(channelId: string, runner: ClaudeProcess): Promise<void> {
    if (runner.sessionId) this.#sessions.set(channelId, runner.sessionId);
    this.#stopping += 1;
    try {
      await runner.stop();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.#logger.warn(`RunnerRegistry: stopping the process of ${channelId} failed: ${reason}`);
    } finally {
      this.#stopping -= 1;
      this.#onFreed?.();
    }
  }
}

let shared: RunnerRegistry | undefined;

const DEFAULT_OPTIONS: RunnerRegistryOptions = { maxLive: 4, idleMinutes: 20 };

/**
 * The process-wide registry, created by the first call; options of later calls are ignored.
 */
export function getRegistry(options: Partial<RunnerRegistryOptions> = {}): RunnerRegistry {
  shared ??= new RunnerRegistry({ ...DEFAULT_OPTIONS, ...options });
  return shared;
}

/** Closes the process-wide registry (stopping its processes) and forgets it. */
export async function resetRegistryForTests(): Promise<void> {
  const previous = shared;
  shared = undefined;
  await previous?.close();
}
