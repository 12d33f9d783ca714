import type { Sandbox } from "../sandbox/sandbox.js";
import { type CommandResult, runCommand } from "../tools/run-command.js";
import type { BackgroundTask } from "./task.js";

/** Background commands get longer than foreground ones before they are killed. */
const DEFAULT_BACKGROUND_TIMEOUT_MS = 30 * 60 * 1000;

/** Bounded per task: head and tail are kept, the middle is cut. */
const MAX_TASK_OUTPUT_CHARS = 30_000;

export type TaskEndListener = (task: BackgroundTask) => void;

export interface BackgroundManagerOptions {
  workspace: string;
  timeoutMs?: number;
  /** Confines every task's command, as the foreground bash tool's. */
  sandbox?: Sandbox;
}

/** Only `bash` with `run_in_background: true` (the boolean) goes to the background. */
export function shouldRunBackground(toolName: string, input: Record<string, unknown>): boolean {
  return toolName === "bash" && input.run_in_background === true;
}

/**
 * Runs bash commands in the background and hands their results over exactly
 * once. Ids are allocated synchronously, so two starts never share one; a
 * finished task is claimed by `collectFinished` in the same synchronous step
 * that marks it delivered, so two callers can never both receive it.
 */
export class BackgroundManager {
  readonly tasks = new Map<string, BackgroundTask>();
  readonly #workspace: string;
  readonly #timeoutMs: number;
  readonly #sandbox: Sandbox | undefined;
  readonly #abort = new AbortController();
  readonly #listeners = new Set<TaskEndListener>();
  readonly #running = new Map<string, Promise<void>>();
  #nextNumber = 1;

  constructor(options: BackgroundManagerOptions) {
    this.#workspace = options.workspace;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_BACKGROUND_TIMEOUT_MS;
    this.#sandbox = options.sandbox;
  }

  /** Starts `command` and returns its id at once. */
  start(command: string, toolUseId = ""): string {
    const id = `bg_${String(this.#nextNumber++).padStart(4, "0")}`;
    const task: BackgroundTask = {
      id,
      command,
      toolUseId,
      status: "running",
      exitCode: null,
      signal: null,
      timedOut: false,
      output: "",
      startedAt: Date.now(),
      endedAt: null,
      delivered: false,
    };
    this.tasks.set(id, task);
    const done = runCommand(command, {
      cwd: this.#workspace,
      timeoutMs: this.#timeoutMs,
      signal: this.#abort.signal,
      maxOutputChars: MAX_TASK_OUTPUT_CHARS,
      ...(this.#sandbox === undefined ? {} : { sandbox: this.#sandbox }),
    }).then((result) => this.#finish(task, result));
    this.#running.set(id, done);
    return id;
  }

  #finish(task: BackgroundTask, result: CommandResult): void {
    task.exitCode = result.exitCode;
    task.signal = result.signal;
    task.timedOut = result.timedOut;
    task.output = result.output;
    task.status = result.exitCode === 0 && !result.timedOut ? "completed" : "failed";
    task.endedAt = Date.now();
    this.#running.delete(task.id);
    for (const listener of this.#listeners) listener(task);
  }

  /** Finished tasks not yet delivered, each returned exactly once. */
  collectFinished(): BackgroundTask[] {
    const finished: BackgroundTask[] = [];
    for (const task of this.tasks.values()) {
      if (task.status !== "running" && !task.delivered) {
        task.delivered = true;
        finished.push(task);
      }
    }
    return finished;
  }

  runningCount(): number {
    return this.#running.size;
  }

  /** True when some task is running or finished but not yet delivered. */
  hasPendingWork(): boolean {
    for (const task of this.tasks.values()) if (!task.delivered) return true;
    return false;
  }

  onTaskEnd(listener: TaskEndListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves when every running task has ended, or when `signal` aborts. */
  async waitForAll(signal?: AbortSignal): Promise<void> {
    const aborted = new Promise<void>((resolve) => {
      if (signal?.aborted) resolve();
      signal?.addEventListener("abort", () => resolve(), { once: true });
    });
    while (this.#running.size > 0 && !signal?.aborted) {
      await Promise.race([Promise.all(this.#running.values()), aborted]);
    }
  }

  /** Kills every running task's process group; their results still arrive as `failed`. */
  async stopAll(): Promise<void> {
    this.#abort.abort();
    await Promise.all(this.#running.values());
  }
}
