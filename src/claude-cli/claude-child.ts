import { type ChildProcess, spawn } from "node:child_process";
import { setPriority } from "node:os";
import { withAttachedImages } from "./attached-images.js";
import { encodeNdjsonLine, NdjsonDecoder, type NdjsonError } from "./ndjson.js";
import { execFailure, withParentDeathSignal } from "./parent-death.js";
import { StderrTail } from "./stderr-tail.js";
import { hasExited, terminateProcessTree, trackChild } from "./terminate.js";

export interface ClaudeChildHandlers {
  onLine(line: Record<string, unknown>): void;
  onOutputError(error: NdjsonError): void;
  /** Called once, after the last stdout line was delivered. */
  onExit(exit: ChildExit): void;
  /** Called at once before each line is written to the child's stdin. */
  beforeWrite?: (() => void) | undefined;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the binary could not be started at all (ENOENT, EACCES). */
  spawnError: Error | undefined;
}

/** How long to wait for stdout to reach its end after the child exited. */
const STDOUT_DRAIN_MS = 1000;

/**
 * One spawned CLI: detached in its own process group, stdin/stdout/stderr piped, stderr always
 * drained into a bounded tail, stdout framed as NDJSON, and sent SIGTERM if its parent dies
 * (`withParentDeathSignal`). Reports exactly one `onExit`.
 */
export class ClaudeChild {
  readonly process: ChildProcess;
  /** The last 50 lines this child wrote to stderr. */
  readonly stderrTail = new StderrTail(50);
  #exitReported = false;
  readonly #beforeWrite: (() => void) | undefined;
  readonly #cwd: string;

  constructor(
    command: readonly string[],
    spawnOptions: {
      cwd: string | undefined;
      env: Record<string, string>;
      niceness?: number | undefined;
    },
    handlers: ClaudeChildHandlers,
    maxLineLength: number | undefined,
  ) {
    const [binary = "claude", ...args] = withParentDeathSignal(command);
    const child = spawn(binary, args, {
      cwd: spawnOptions.cwd,
      env: spawnOptions.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.process = child;
    this.#cwd = spawnOptions.cwd ?? process.cwd();
    if (spawnOptions.niceness !== undefined && child.pid !== undefined) {
      try {
        setPriority(child.pid, spawnOptions.niceness);
      } catch {
        // Gone already, or a system that refuses: the child runs at the host's priority.
      }
    }
    this.#beforeWrite = handlers.beforeWrite;
    trackChild(child);
    const decoder = new NdjsonDecoder(
      {
        onValue: (value) => {
          if (typeof value === "object" && value !== null && !Array.isArray(value)) {
            handlers.onLine(value as Record<string, unknown>);
          } else {
            handlers.onOutputError({
              kind: "invalid_json",
              message: "line is JSON but not an object",
              excerpt: JSON.stringify(value).slice(0, 200),
            });
          }
        },
        onError: (error) => handlers.onOutputError(error),
      },
      maxLineLength === undefined ? {} : { maxLineLength },
    );
    let stdoutEnded = false;
    let exit: ChildExit | undefined;
    let stderrEnded = false;
    /** Set once the exited child's pipes had their time to reach their end. */
    let drained = false;
    const report = () => {
      if (this.#exitReported || !exit) return;
      // A start that `setpriv` could not exec is known by its stderr line: wait for it.
      if (exit.code === 127 && !stderrEnded && !drained) return;
      this.#exitReported = true;
      if (!stdoutEnded) decoder.end();
      this.stderrTail.flush();
      exit.spawnError ??= execFailure(exit.code, this.stderrTail.lines());
      handlers.onExit(exit);
    };
    child.stdin?.on("error", () => {
      // EPIPE and friends surface through write callbacks and the exit.
    });
    child.stdout?.on("data", (chunk: Buffer) => decoder.push(chunk));
    child.stdout?.on("end", () => {
      stdoutEnded = true;
      decoder.end();
      report();
    });
    child.stderr?.on("data", (chunk: Buffer) => this.stderrTail.push(chunk));
    child.stderr?.on("end", () => {
      stderrEnded = true;
      report();
    });
    child.on("error", (error) => {
      if (child.pid !== undefined) return;
      exit = { code: null, signal: null, spawnError: error };
      stdoutEnded = true;
      report();
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal, spawnError: undefined };
      const drain = () => {
        drained = true;
        report();
      };
      if (stdoutEnded) report();
      if (!this.#exitReported) setTimeout(drain, STDOUT_DRAIN_MS).unref();
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  alive(): boolean {
    return this.process.pid !== undefined && !hasExited(this.process) && !this.#exitReported;
  }

  /**
   * Writes one NDJSON line (a user message's attached images added from the child's folder);
   * rejects (code `EPIPE`) when the child can no longer read.
   */
  write(value: unknown): Promise<void> {
    const stdin = this.process.stdin;
    if (!stdin?.writable || !this.alive()) {
      return Promise.reject(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    }
    this.#beforeWrite?.();
    return new Promise((resolve, reject) => {
      stdin.write(encodeNdjsonLine(withAttachedImages(value, this.#cwd)), (error) =>
        error ? reject(error) : resolve(),
      );
    });
  }

  terminate(graceMs: number): Promise<void> {
    return terminateProcessTree(this.process, graceMs);
  }
}
