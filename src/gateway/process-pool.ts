import { ClaudeProcess, type ClaudeProcessOptions } from "../claude-cli/claude-process.js";
import { RunnerRegistry } from "../claude-cli/runner-registry.js";
import type { AgentProcess, ProcessPool, RunnerInfo } from "./agent-process.js";

export interface RegistryPoolOptions {
  maxLive: number;
  idleMinutes: number;
  processOptions: ClaudeProcessOptions;
  logger?: (line: string) => void;
}

interface Entry {
  process: ClaudeProcess;
  oneShot: boolean;
  inflight: boolean;
  idleSince: string | null;
}

/**
 * Options for a process that resumes `sessionId` from its first spawn. ClaudeProcess learns
 * its session id only from the child, so a restarted gateway passes `--resume` as an extra
 * argument; once the child reports its session, ClaudeProcess adds `--resume` itself.
 */
function resuming(options: ClaudeProcessOptions, sessionId: string | null): ClaudeProcessOptions {
  if (!sessionId) return options;
  return { ...options, extraArgs: [...(options.extraArgs ?? []), "--resume", sessionId] };
}

/**
 * The router's processes from a `RunnerRegistry` (kept per channel, at most `maxLive`) plus
 * one-shot processes at the cap. Keeps its own list of what it handed out, for
 * `GET /api/runners`, since the registry does not list its entries.
 */
export class RegistryProcessPool implements ProcessPool {
  readonly registry: RunnerRegistry;
  readonly #processOptions: ClaudeProcessOptions;
  readonly #kept = new Map<string, Entry>();
  readonly #oneShots = new Set<Entry>();

  constructor(options: RegistryPoolOptions) {
    this.#processOptions = options.processOptions;
    const log = options.logger ?? ((line: string) => process.stderr.write(`${line}\n`));
    this.registry = new RunnerRegistry({
      maxLive: options.maxLive,
      idleMinutes: options.idleMinutes,
      processOptions: options.processOptions,
      logger: { warn: log },
    });
  }

  get(channelId: string, sessionId: string | null): AgentProcess | null {
    let process = this.registry.get(channelId);
    if (!process) return null;
    const never = process.pid === undefined && process.sessionId === null;
    if (never && sessionId && this.#kept.get(channelId)?.process !== process) {
      process = new ClaudeProcess(channelId, resuming(this.#processOptions, sessionId));
      this.registry.adopt(channelId, process);
    }
    const known = this.#kept.get(channelId);
    if (known?.process !== process) {
      this.#kept.set(channelId, { process, oneShot: false, inflight: false, idleSince: null });
    }
    return process;
  }

  oneShot(channelId: string, sessionId: string | null): AgentProcess {
    const process = new ClaudeProcess(channelId, resuming(this.#processOptions, sessionId));
    const entry: Entry = { process, oneShot: true, inflight: true, idleSince: null };
    this.#oneShots.add(entry);
    return process;
  }

  async releaseOneShot(process: AgentProcess): Promise<void> {
    for (const entry of this.#oneShots) {
      if (entry.process === process) this.#oneShots.delete(entry);
    }
    await process.stop();
  }

  noteTurn(channelId: string, process: AgentProcess, inflight: boolean): void {
    const entry =
      this.#kept.get(channelId)?.process === process
        ? this.#kept.get(channelId)
        : [...this.#oneShots].find((candidate) => candidate.process === process);
    if (!entry) return;
    entry.inflight = inflight;
    entry.idleSince = inflight ? null : new Date().toISOString();
  }

  list(): RunnerInfo[] {
    const entries = [
      ...this.#kept.entries(),
      ...[...this.#oneShots].map((entry) => [entry.process.channelId, entry] as const),
    ];
    return entries
      .filter(([, entry]) => entry.inflight || entry.process.alive())
      .map(([channelId, entry]) => ({
        channelId,
        pid: entry.process.pid ?? null,
        inflight: entry.inflight,
        idleSince: entry.inflight ? null : entry.idleSince,
        sessionId: entry.process.sessionId,
        oneShot: entry.oneShot,
      }));
  }

  async stop(channelId: string): Promise<boolean> {
    const entry = this.#kept.get(channelId);
    if (!entry || !(entry.inflight || entry.process.alive())) return false;
    await entry.process.stop();
    return true;
  }

  async stopAll(): Promise<void> {
    const oneShots = [...this.#oneShots].map((entry) => entry.process.stop());
    await Promise.allSettled([this.registry.close(), ...oneShots]);
  }
}
