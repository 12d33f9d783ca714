/**
 * An agent process another process started for this one (the agent spawner), in the shape of
 * Node's `ChildProcess` that `ClaudeChild` uses: pid, stdin/stdout/stderr streams, `spawn`,
 * `exit` and `error` events, `exitCode`/`signalCode`. Its streams exist from the start (what is
 * written before the pipes arrive waits in `stdin`); the real pipes are joined to them as they
 * come. A started child's pid arrives a moment later: meanwhile `starting` is true.
 */
import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { PassThrough } from "node:stream";
import type { SpawnedChild } from "../spawned-child.js";
import type { StdioName } from "./spawner-messages.js";

export class RemoteChild extends EventEmitter implements SpawnedChild {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: string | null = null;
  starting = true;
  readonly #joined = new Set<StdioName>();

  /** The start is done: the child runs as `pid`. */
  started(pid: number): void {
    if (!this.starting) return;
    this.pid = pid;
    this.starting = false;
    this.emit("spawn");
  }

  /** The start failed; the child never ran. */
  failed(error: Error): void {
    if (!this.starting) return;
    this.starting = false;
    this.#endUnjoined();
    this.emit("error", error);
  }

  /** One of the child's pipes, taken over from the spawner. */
  join(stream: StdioName, socket: Socket): void {
    this.#joined.add(stream);
    socket.on("error", () => {
      // EPIPE and resets surface as the exit; the pipe's end ends the stream below.
    });
    if (stream === "stdin") this.stdin.pipe(socket);
    else socket.pipe(this[stream]);
  }

  /** The child ended (`code`, or `signal`); a pipe that never came is ended here. */
  exited(code: number | null, signal: string | null): void {
    if (this.exitCode !== null || this.signalCode !== null) return;
    this.starting = false;
    this.exitCode = code;
    this.signalCode = code === null ? (signal ?? "SIGKILL") : null;
    this.#endUnjoined();
    this.emit("exit", this.exitCode, this.signalCode);
  }

  #endUnjoined(): void {
    for (const stream of ["stdout", "stderr"] as const) {
      if (this.#joined.has(stream)) continue;
      this.#joined.add(stream);
      this[stream].end();
    }
  }
}
