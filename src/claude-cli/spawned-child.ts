/**
 * What an agent process is to its runner, however it was started: Node's `ChildProcess`
 * (spawned by the host itself) or a `RemoteChild` (spawned by the gateway's agent spawner, its
 * pipes passed back). Both are in a process group of their own, parent-death signal set (or
 * owned by a watcher: `OwnedStart`).
 */
import type { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";

/**
 * The part of `ChildProcess` the runner uses. Events: `spawn` (pid known), `exit` (code,
 * signal), `error` (could not start: pid stays undefined).
 */
export interface SpawnedChild extends EventEmitter {
  readonly pid?: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | string | null;
  /** True while a start asked of another process has not reported its pid or failure yet. */
  readonly starting?: boolean;
}

export interface SpawnOptions {
  cwd: string | undefined;
  env: Record<string, string>;
  /** Scheduling niceness set as it starts (best effort). */
  niceness?: number | undefined;
  /** Owned by a watcher in its group rather than by the parent-death signal (`OwnedStart`). */
  owned?: OwnedStart | undefined;
}

/**
 * A start owned as a sandbox is (src/sandbox/owned-command.ts): a watcher in the child's group
 * sees the starting process die, however it died, and ends the group: SIGTERM, then SIGKILL
 * once the child has exited or after `graceMs`; the group is SIGKILLed once the child has
 * exited. For a child that is a monitor of the real program (bubblewrap in front of Claude
 * Code), whose death the parent-death signal would cause too early. `ignoreTerm`: the child
 * starts with SIGTERM ignored, so that the group's SIGTERM ends the program it monitors, not
 * it (what it starts sets the signal back).
 */
export interface OwnedStart {
  ignoreTerm: boolean;
  graceMs: number;
}

/** Starts agent processes: detached, stdio piped, with the parent-death signal. */
export interface ChildSpawner {
  spawn(command: readonly string[], options: SpawnOptions): SpawnedChild;
}
