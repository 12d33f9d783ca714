import { spawnOwned } from "../sandbox/owned-spawn.js";

/** stdout beyond this is dropped (a hook's JSON answer is small). */
const STDOUT_LIMIT_BYTES = 1024 * 1024;
/** Only the tail of stderr is kept: the end of an error says most. */
const STDERR_TAIL_BYTES = 64 * 1024;
/** Time between SIGTERM and SIGKILL to the group. */
const KILL_GRACE_MS = 1000;
/** How long to wait for stdio to close after the hook's own process exited. */
const DRAIN_AFTER_EXIT_MS = 2000;

export interface HookProcessOptions {
  /** Program and arguments, run without a shell. */
  argv: readonly [string, ...string[]];
  stdin: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface HookProcessResult {
  /** Exit status, or undefined when killed by a signal or never started. */
  exitCode: number | undefined;
  stdout: string;
  stdoutTruncated: boolean;
  stderrTail: string;
  /** Why rudder ended it early, if it did. */
  cause?: "timeout" | "aborted";
  /** Set when the program could not be started. */
  spawnError?: Error;
}

/**
 * Runs one hook program in its own process group, owned (`spawnOwned`: the
 * group dies with rudder, SIGKILL included), feeds it `stdin`, and collects
 * bounded output. The whole group is killed (SIGTERM, grace,
 * SIGKILL) on timeout, on abort, and once the hook itself has exited, so
 * nothing it started outlives it. Never rejects.
 */
export function runHookProcess(options: HookProcessOptions): Promise<HookProcessResult> {
  return new Promise((resolve) => {
    const [program, ...args] = options.argv;
    const stdoutChunks: Buffer[] = [];
    let stdoutBytes = 0;
    let stdoutTruncated = false;
    let stderrTail = Buffer.alloc(0);
    let cause: HookProcessResult["cause"];
    let exitCode: number | undefined;
    let settled = false;

    const child = spawnOwned(program, args, { cwd: options.cwd, env: options.env });

    const killGroup = (): void => {
      const pid = child.pid;
      if (pid === undefined) return;
      signalGroup(pid, "SIGTERM");
      setTimeout(() => signalGroup(pid, "SIGKILL"), KILL_GRACE_MS).unref();
    };
    const stop = (reason: "timeout" | "aborted"): void => {
      if (settled || cause !== undefined) return;
      cause = reason;
      killGroup();
    };

    const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
    timer.unref();
    const onAbort = (): void => stop("aborted");
    options.signal.addEventListener("abort", onAbort, { once: true });

    const settle = (spawnError?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        exitCode,
        stdout: Buffer.concat(stdoutChunks).toString("utf8"),
        stdoutTruncated,
        stderrTail: stderrTail.toString("utf8"),
        ...(cause === undefined ? {} : { cause }),
        ...(spawnError === undefined ? {} : { spawnError }),
      });
    };

    child.stdout.on("data", (chunk: Buffer) => {
      const room = STDOUT_LIMIT_BYTES - stdoutBytes;
      if (chunk.length > room) stdoutTruncated = true;
      if (room <= 0) return;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      stdoutChunks.push(kept);
      stdoutBytes += kept.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      const joined = Buffer.concat([stderrTail, chunk]);
      stderrTail = joined.length > STDERR_TAIL_BYTES ? joined.subarray(-STDERR_TAIL_BYTES) : joined;
    });
    child.stdin.on("error", () => {
      // A hook may exit without reading its input (EPIPE); its exit status says what matters.
    });
    child.on("error", (error) => settle(error));
    child.on("exit", (code) => {
      exitCode = code ?? undefined;
      killGroup();
      setTimeout(() => settle(), DRAIN_AFTER_EXIT_MS).unref();
    });
    child.on("close", () => settle());

    if (options.signal.aborted) stop("aborted");
    child.stdin.end(options.stdin);
  });
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
