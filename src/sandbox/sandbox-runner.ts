import type { ChildProcess, StdioOptions } from "node:child_process";
import { connect, type Socket } from "node:net";
import { constants } from "node:os";
import type { Writable } from "node:stream";
import { childProcess } from "./child-process.js";
import type { CommandHandlers, CommandProcess } from "./command-process.js";
import { killGroup, ownedCommand, watchOwned } from "./owned-command.js";
import type { PidsCgroup } from "./pids-cgroup.js";

/** Moves the shell into the cgroup (its `cgroup.procs` is the first argument), before it becomes bubblewrap. */
const ENTER_CGROUP = 'echo $$ > "$1" && shift && ';
/** How often, and how many times, an ended sandbox's cgroup is tried to be removed (it empties a moment later). */
const CGROUP_REMOVE_RETRY_MS = 100;
const CGROUP_REMOVE_TRIES = 30;

/** The child's descriptor carrying the privilege filter to bubblewrap (`--add-seccomp-fd`). */
export const PRIVILEGE_FILTER_FD = 3;
/** The child's descriptor carrying the unix-socket filter for the whole sandbox (the node runner's). */
export const UNIX_SOCKET_FILTER_FD = 4;

/** How much of bubblewrap's and the runner's own stderr is kept, to say why a sandbox broke. */
const STDERR_TAIL_CHARS = 2000;

interface RunnerEvent {
  type: "ready" | "data" | "exit" | "error" | "close";
  id: number;
  stream?: number;
  length?: number;
  code?: number | null;
  /** By name (the node runner) or by number (the perl one). */
  signal?: string | number | null;
  message?: string;
}

/**
 * One long-lived bubblewrap sandbox of a session and the runner inside it
 * (runner-script.ts), which starts each command in its own process group: a
 * command costs a fork and exec, not a sandbox's setup. The sandbox is in
 * its own process group on the host and dies with rudder (die-with-parent,
 * and the runner exits when its stdin ends, which ends its PID namespace;
 * the group is SIGKILLed too, by `ownedCommand`'s watcher, for a bubblewrap
 * killed before its sandbox was released). What the
 * runner writes is data, never trusted: commands inside share its user.
 * `args` is bubblewrap's full argument list; `key` says which confinement
 * it is, so the caller can tell when a new one is needed.
 */
export class SandboxRunner {
  readonly key: string;
  /** Whether the sandbox came up: true once the runner inside says so, false if it ended first. */
  readonly ready: Promise<boolean>;
  #resolveReady: (ready: boolean) => void = () => {};
  readonly #child: ChildProcess;
  readonly #commands = new Map<number, CommandHandlers>();
  readonly #onIdle: () => void;
  #nextId = 1;
  #stderrTail = "";
  /** The start of a line not yet complete. */
  #partial: Buffer = Buffer.alloc(0);
  /** Raw output bytes still to come for a command's stream, after a `data` event's line. */
  #raw: { id: number; stream: 1 | 2; remaining: number } | undefined;
  #broken: string | undefined;

  /** `onIdle` is called whenever the last running command has closed. */
  constructor(
    file: string,
    args: string[],
    options: {
      key: string;
      env: NodeJS.ProcessEnv;
      onIdle: () => void;
      cgroup?: PidsCgroup;
      /** Written to the child's descriptor 3 (`PRIVILEGE_FILTER_FD`), where bubblewrap reads its seccomp filter. */
      privilegeFilter?: Buffer;
      /** Written to descriptor 4 (`UNIX_SOCKET_FILTER_FD`), the node runner's whole-sandbox filter. */
      unixSocketFilter?: Buffer;
      /**
       * The domain proxy's socket, for the node runner's bridge: each `{type:"bridge"}` it sends on
       * its IPC channel gets back a socket connected here (runner-script.ts).
       */
      bridgeTo?: string;
    },
  ) {
    this.key = options.key;
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
    this.#onIdle = options.onIdle;
    const cgroup = options.cgroup;
    const filters: [number, Buffer | undefined][] = [
      [PRIVILEGE_FILTER_FD, options.privilegeFilter],
      [UNIX_SOCKET_FILTER_FD, options.unixSocketFilter],
    ];
    const bridgeTo = options.bridgeTo;
    const stdio: StdioOptions = [
      "pipe",
      "pipe",
      "pipe",
      ...filters.map(([, filter]) => (filter === undefined ? "ignore" : "pipe")),
      ...(bridgeTo === undefined ? [] : ["ipc" as const]),
      "pipe",
    ];
    const watcherFd = stdio.length - 1;
    // The watcher starts before the cgroup is entered: the sandbox's process limit counts its own.
    const [program, programArgs] =
      cgroup === undefined
        ? ownedCommand(file, args, watcherFd)
        : ownedCommand(cgroup.procsFile, [file, ...args], watcherFd, { before: ENTER_CGROUP });
    this.#child = childProcess().spawn(program, programArgs, {
      detached: true,
      env: options.env,
      stdio,
    });
    watchOwned(this.#child, watcherFd);
    for (const [fd, filter] of filters) {
      if (filter === undefined) continue;
      // A few hundred bytes: the pipe holds them all before bubblewrap reads them to its end.
      const pipe = this.#child.stdio[fd] as Writable | null;
      pipe?.on("error", () => {});
      pipe?.end(filter);
    }
    if (bridgeTo !== undefined) this.#serveBridge(bridgeTo);
    // Until it is up, a starting sandbox keeps rudder alive, as a probe's process would: Node
    // must not take a moment with nothing else pending for the end of the program.
    this.#hold(true);
    void this.ready.then(() => {
      if (this.#commands.size === 0) this.#hold(false);
    });
    for (const stream of [this.#child.stdin, this.#child.stdout, this.#child.stderr]) {
      stream?.on("error", () => {});
    }
    this.#child.stdout?.on("data", (chunk: Buffer) => this.#receive(chunk));
    this.#child.stderr?.setEncoding("utf8");
    this.#child.stderr?.on("data", (chunk: string) => {
      this.#stderrTail = (this.#stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    this.#child.on("error", (error) =>
      this.#break(`the sandbox could not start: ${error.message}`),
    );
    this.#child.on("close", (code, signal) => {
      if (cgroup !== undefined) removeWhenEmpty(cgroup);
      const tail = this.#stderrTail.trim();
      const status = signal === null ? `exit status ${code}` : signal;
      this.#break(`the sandbox ended (${status})${tail === "" ? "" : `: ${tail}`}`);
    });
  }

  /** Whether it can still run commands. */
  get usable(): boolean {
    return this.#broken === undefined;
  }

  /** How many commands have started and not yet closed. */
  get running(): number {
    return this.#commands.size;
  }

  /** Starts `bash -c command` in `cwd` with `env` inside. */
  run(
    command: string,
    cwd: string,
    env: NodeJS.ProcessEnv,
    handlers: CommandHandlers,
  ): CommandProcess {
    const id = this.#nextId++;
    if (this.#broken !== undefined) {
      handlers.onError(this.#broken);
      handlers.onClose();
      return { terminate: () => {} };
    }
    const fields = [cwd, command];
    for (const [name, value] of Object.entries(env)) {
      if (value !== undefined) fields.push(`${name}=${value}`);
    }
    if (fields.some((field) => field.includes("\0"))) {
      handlers.onError("the command, its folder or its environment holds a NUL character");
      handlers.onClose();
      return { terminate: () => {} };
    }
    this.#commands.set(id, handlers);
    this.#hold(true);
    const payload = Buffer.from(fields.join("\0"), "utf8");
    this.#child.stdin?.write(
      Buffer.concat([Buffer.from(`run ${id} ${payload.length}\n`), payload]),
    );
    let terminated = false;
    return {
      terminate: () => {
        if (terminated || !this.#commands.has(id)) return;
        terminated = true;
        this.#child.stdin?.write(`terminate ${id}\n`);
      },
    };
  }

  /** Ends the sandbox and everything in it at once. Synchronous; safe to call twice. */
  close(): void {
    this.#break("the sandbox was closed");
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      killGroup(this.#child.pid);
    }
  }

  /**
   * Answers each of the node runner's bridge requests with a socket connected to the proxy, or
   * with none when it cannot be reached (the runner then closes that connection). What comes on
   * the channel is data: anything else is ignored.
   */
  #serveBridge(proxySocket: string): void {
    const child = this.#child;
    child.on("error", () => {});
    child.on("message", (message: { type?: unknown } | null) => {
      if (message?.type !== "bridge") return;
      const answer = (upstream?: Socket): void => {
        if (!child.connected) return void upstream?.destroy();
        child.send({ type: "bridge" }, upstream, (error) => {
          if (error) upstream?.destroy();
        });
      };
      let answered = false;
      const upstream = connect(proxySocket);
      upstream.once("connect", () => {
        answered = true;
        answer(upstream);
      });
      upstream.on("error", () => {
        upstream.destroy();
        if (!answered) answer();
        answered = true;
      });
    });
  }

  #receive(chunk: Buffer): void {
    let data = this.#partial.length === 0 ? chunk : Buffer.concat([this.#partial, chunk]);
    this.#partial = Buffer.alloc(0);
    while (data.length > 0) {
      const raw = this.#raw;
      if (raw !== undefined) {
        const taken = data.subarray(0, raw.remaining);
        raw.remaining -= taken.length;
        data = data.subarray(taken.length);
        if (raw.remaining === 0) this.#raw = undefined;
        this.#commands.get(raw.id)?.onData(raw.stream, taken);
        continue;
      }
      const end = data.indexOf(10);
      if (end === -1) {
        this.#partial = Buffer.from(data);
        return;
      }
      const line = data.subarray(0, end).toString("utf8");
      data = data.subarray(end + 1);
      this.#event(line);
    }
  }

  #event(line: string): void {
    let event: RunnerEvent;
    try {
      event = JSON.parse(line);
    } catch {
      return;
    }
    if (event?.type === "ready") {
      this.#resolveReady(true);
      return;
    }
    if (event?.type === "data") {
      const length = Number(event.length);
      const stream = event.stream === 2 ? 2 : 1;
      if (Number.isInteger(length) && length > 0) {
        this.#raw = { id: event.id, stream, remaining: length };
      }
      return;
    }
    const handlers = this.#commands.get(event?.id);
    if (handlers === undefined) return;
    if (event.type === "exit") {
      handlers.onExit(event.code ?? null, signalName(event.signal));
    } else if (event.type === "error") {
      handlers.onError(String(event.message));
    } else if (event.type === "close") {
      this.#closeCommand(event.id, handlers);
    }
  }

  #closeCommand(id: number, handlers: CommandHandlers): void {
    this.#commands.delete(id);
    handlers.onClose();
    if (this.#commands.size === 0) {
      this.#hold(false);
      this.#onIdle();
    }
  }

  /** A running command keeps rudder alive, as a plain child would; an idle sandbox does not. */
  #hold(held: boolean): void {
    if (held) this.#child.ref();
    else this.#child.unref();
    // stdin, stdout, stderr and the watcher's pipe (`ownedCommand`).
    for (const stream of this.#child.stdio) {
      const handle = stream as unknown as { ref?: () => void; unref?: () => void } | null;
      if (held) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  /** Every running command learns why the sandbox is gone; later ones are refused with it. */
  #break(reason: string): void {
    if (this.#broken !== undefined) return;
    this.#broken = reason;
    this.#resolveReady(false);
    for (const [id, handlers] of [...this.#commands]) {
      handlers.onError(reason);
      this.#closeCommand(id, handlers);
    }
    this.#child.stdin?.end();
  }
}

/** A signal as Node names it (`SIGKILL`), from a name or this system's number for it. */
function signalName(signal: string | number | null | undefined): string | null {
  if (typeof signal === "string") return signal;
  if (typeof signal !== "number") return null;
  for (const [name, number] of Object.entries(constants.signals)) {
    if (number === signal) return name;
  }
  return `signal ${signal}`;
}

function removeWhenEmpty(cgroup: PidsCgroup, tries = CGROUP_REMOVE_TRIES): void {
  if (cgroup.remove() || tries <= 1) return;
  setTimeout(() => removeWhenEmpty(cgroup, tries - 1), CGROUP_REMOVE_RETRY_MS).unref();
}
