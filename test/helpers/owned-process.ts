/**
 * Programs a test starts, owned the way rudder owns its own: each in its own process group, with
 * explicit stdio, an 'error' listener, stdout and stderr always drained into strings, and every
 * group still there killed when the test file ends (a test that failed before its cleanup
 * included).
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface ProcessOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed. */
  input?: string;
  /** Without `input`: stdin a pipe left open for the test to write (`child.stdin`), or none. */
  stdin?: "pipe" | "ignore";
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface OwnedProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Settles when the process has exited (its output may still be arriving). */
  exited: Promise<Exit>;
  /** Settles when the process has exited and its stdout and stderr have ended. */
  closed: Promise<Exit>;
  /** Sends `signal` (SIGKILL by default) to the whole group, if it is still there. */
  kill(signal?: NodeJS.Signals): void;
}

export interface Finished extends Exit {
  stdout: string;
  stderr: string;
}

const groups = new Set<number>();
process.once("exit", killOwnedGroups);

/**
 * SIGKILLs every group started here and still there: at the test process's exit, and at the end
 * of each test file (test/helpers/file-end-cleanup.ts), as files share their worker process.
 */
export function killOwnedGroups(): void {
  for (const group of groups) killGroup(group, "SIGKILL");
  groups.clear();
}

/** Sends `signal` to process group `group`; a group already gone is no error. */
export function killGroup(group: number, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    process.kill(-group, signal);
  } catch {
    // Already gone.
  }
}

/** Starts `file` with `args` in a process group of its own, collecting its output. */
export function startProcess(
  file: string,
  args: string[],
  options: ProcessOptions = {},
): OwnedProcess {
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: [
      options.input !== undefined || options.stdin === "pipe" ? "pipe" : "ignore",
      "pipe",
      "pipe",
    ],
  });
  const group = child.pid;
  if (group !== undefined) groups.add(group);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  child.stdin?.on("error", () => undefined);
  if (options.input !== undefined) child.stdin?.end(options.input);
  const failed = new Promise<Exit>((resolve) => {
    child.once("error", (error) => {
      stderr += `${String(error)}\n`;
      resolve({ code: null, signal: null });
    });
  });
  const exited = Promise.race([
    failed,
    new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal }))),
  ]);
  const closed = Promise.race([
    failed,
    new Promise<Exit>((resolve) =>
      child.once("close", (code, signal) => resolve({ code, signal })),
    ),
  ]);
  void closed.then(() => {
    if (group !== undefined) groups.delete(group);
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    closed,
    kill: (signal = "SIGKILL") => {
      if (group !== undefined) killGroup(group, signal);
    },
  };
}

/**
 * Runs `file` to its end and resolves with its exit and output; when it has not ended within
 * `timeoutMs` its group is killed and the promise rejects with what it printed.
 */
export async function runProcess(
  file: string,
  args: string[],
  options: ProcessOptions & { timeoutMs?: number } = {},
): Promise<Finished> {
  const started = startProcess(file, args, options);
  const timeoutMs = options.timeoutMs ?? 90_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      started.kill();
      reject(
        new Error(
          `${file} ${args.join(" ")} did not end within ${timeoutMs} ms: ${started.stdout()} ${started.stderr()}`,
        ),
      );
    }, timeoutMs);
  });
  try {
    const exit = await Promise.race([started.closed, timedOut]);
    return { ...exit, stdout: started.stdout(), stderr: started.stderr() };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Stops a started program as a supervisor would: SIGTERM to it, up to `graceMs` for it to exit,
 * then its whole group SIGKILLed (what it left behind included).
 */
export async function stopProcess(started: OwnedProcess, graceMs = 5000): Promise<void> {
  started.child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    started.exited,
    new Promise((resolve) => {
      timer = setTimeout(resolve, graceMs);
    }),
  ]);
  clearTimeout(timer);
  started.kill();
}

/**
 * Resolves with the first match of `pattern` in the program's stdout as soon as it is printed
 * (a URL, a pid, a JSON line it prints once ready); rejects, naming what it printed, if the
 * program ends first.
 */
export function outputMatching(started: OwnedProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const look = (): boolean => {
      const match = pattern.exec(started.stdout());
      if (match !== null) resolve(match);
      return match !== null;
    };
    if (look()) return;
    const onData = (): void => {
      if (look()) started.child.stdout?.off("data", onData);
    };
    started.child.stdout?.on("data", onData);
    void started.closed.then((exit) => {
      if (look()) return;
      reject(
        new Error(
          `the program ended (${exit.code ?? exit.signal}) before printing ${pattern}: ${started.stdout()} ${started.stderr()}`,
        ),
      );
    });
  });
}
