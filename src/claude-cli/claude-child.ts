import { encodeNdjsonLine, NdjsonDecoder, type NdjsonError } from "./ndjson.js";
import { execFailure } from "./parent-death.js";
import { directSpawner } from "./spawn-direct.js";
import type { ChildSpawner, OwnedStart, SpawnedChild } from "./spawned-child.js";
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
 * (`withParentDeathSignal`). Started by `spawner` (default: from this process; the gateway's
 * agent spawner in `rudder serve`). Reports exactly one `onExit`.
 */
export class ClaudeChild {
  readonly process: SpawnedChild;
  /** The last 50 lines this child wrote to stderr. */
  readonly stderrTail = new StderrTail(50);
  #exitReported = false;
  readonly #beforeWrite: (() => void) | undefined;

  constructor(
    command: readonly string[],
    spawnOptions: {
      cwd: string | undefined;
      env: Record<string, string>;
      niceness?: number | undefined;
      owned?: OwnedStart | undefined;
      spawner?: ChildSpawner | undefined;
    },
    handlers: ClaudeChildHandlers,
    maxLineLength: number | undefined,
  ) {
    const child = (spawnOptions.spawner ?? directSpawner).spawn(command, spawnOptions);
    this.process = child;
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
    child.on("error", (error: Error) => {
      if (child.pid !== undefined) return;
      exit = { code: null, signal: null, spawnError: error };
      stdoutEnded = true;
      report();
    });
    child.on("exit", (code: number | null, signal: NodeJS.Signals | null) => {
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

  /** Running, or being started by another process (what is written meanwhile waits). */
  alive(): boolean {
    const started = this.process.pid !== undefined || this.process.starting === true;
    return started && !hasExited(this.process) && !this.#exitReported;
  }

  /**
   * Writes one NDJSON line; rejects (code `EPIPE`) when the child can no longer read.
   */
  write(value: unknown): Promise<void> {
    const stdin = this.process.stdin;
    if (!stdin?.writable || !this.alive()) {
      return Promise.reject(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    }
    this.#beforeWrite?.();
    return new Promise((resolve, reject) => {
      stdin.write(encodeNdjsonLine(value), (error) => (error ? reject(error) : resolve()));
    });
  }

  terminate(graceMs: number): Promise<void> {
    return terminateProcessTree(this.process, graceMs);
  }
}
