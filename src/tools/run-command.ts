import type { ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { childProcess } from "../sandbox/child-process.js";
import type { CommandHandlers, CommandProcess } from "../sandbox/command-process.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { withoutCredentials } from "../sandbox/sandbox-environment.js";
import { BoundedOutput } from "./bounded-output.js";
import { KILL_GRACE_MS, registerProcessGroup, terminateProcessGroup } from "./process-groups.js";

export interface RunCommandOptions {
  cwd: string;
  /** Kill the group after this long; `Infinity` for never. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output kept in memory: head and tail of half this each. Default 30,000. */
  maxOutputChars?: number;
  /** Every decoded chunk of merged stdout and stderr, as it arrives. */
  onOutput?: (chunk: string) => void;
  /** Confines the command (bubblewrap); without it the command runs as it is. */
  sandbox?: Sandbox;
}

export interface CommandResult {
  /** The shell's exit status; null when it was killed by a signal or never started. */
  exitCode: number | null;
  signal: string | null;
  /** Merged stdout and stderr; a `... [N characters cut] ...` marker where it was cut. */
  output: string;
  timedOut: boolean;
  aborted: boolean;
  truncatedChars: number;
  /** Whether it ran inside the sandbox. */
  sandboxed: boolean;
}

export const DEFAULT_MAX_OUTPUT_CHARS = 30_000;
const MAX_TIMER_MS = 2_147_483_647;

/**
 * How long to keep reading after the shell exits, for output still in the
 * pipes. Background children of the command are killed at the shell's exit,
 * so the pipes normally close well within this.
 */
const DRAIN_AFTER_EXIT_MS = KILL_GRACE_MS + 300;

/**
 * Runs `bash -c command` in its own process group with stdin ignored and
 * stdout and stderr merged in arrival order. When the shell exits, the timeout
 * fires or the signal aborts, the whole group is killed (SIGTERM, grace,
 * SIGKILL), so nothing the command started in the background outlives it.
 * With a sandbox, the shell is started inside the session's bubblewrap
 * sandbox, by its runner, in a process group of its own there, with the same
 * killing (or not at all, when the sandbox refuses it, which is a result
 * with the reason in `output`).
 * Never rejects: a failure to spawn is a result with `exitCode: null` and the
 * error in `output`.
 */
export async function runCommand(
  command: string,
  options: RunCommandOptions,
): Promise<CommandResult> {
  const limit = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const output = new BoundedOutput(Math.ceil(limit / 2), Math.floor(limit / 2));
  if (options.signal?.aborted) return result(output, { aborted: true });
  const prepared = (await options.sandbox?.prepare(command)) ?? { kind: "plain" as const };
  if (prepared.kind === "refused") {
    output.append(prepared.message);
    return result(output, {});
  }
  if (options.signal?.aborted) return result(output, { aborted: true });
  const sandboxed = prepared.kind === "sandboxed";
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let timeoutTimer: NodeJS.Timeout | undefined;
    const decoders = [new StringDecoder("utf8"), new StringDecoder("utf8")] as const;
    const take = (text: string): void => {
      if (text.length === 0 || settled) return;
      output.append(text);
      options.onOutput?.(text);
    };
    let started: CommandProcess | undefined;
    const killGroup = (): void => started?.terminate();
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    const handlers: CommandHandlers = {
      onData: (stream, chunk) => take((stream === 1 ? decoders[0] : decoders[1]).write(chunk)),
      onExit: (code, signal) => {
        exitCode = code;
        exitSignal = signal;
        // The shell is gone; anything left in its group is a background child.
        killGroup();
        drainTimer = setTimeout(handlers.onClose, DRAIN_AFTER_EXIT_MS);
      },
      onError: (message) => output.append(message),
      onClose: () => {
        if (settled) return;
        take(decoders[0].end());
        take(decoders[1].end());
        settled = true;
        clearTimeout(timeoutTimer);
        if (drainTimer) clearTimeout(drainTimer);
        options.signal?.removeEventListener("abort", onAbort);
        killGroup();
        closeOutput();
        resolve(result(output, { exitCode, signal: exitSignal, timedOut, aborted, sandboxed }));
      },
    };
    let closeOutput = (): void => {};
    if (prepared.kind === "sandboxed") {
      started = prepared.start(options.cwd, handlers);
    } else {
      const plain = startPlain(command, options.cwd, handlers);
      started = plain;
      closeOutput = plain.closeOutput;
    }
    if (settled) return;
    // Past 2^31 - 1 ms a Node timer fires at once; an unbounded timeout means no timer.
    if (Number.isFinite(options.timeoutMs)) {
      timeoutTimer = setTimeout(
        () => {
          timedOut = true;
          killGroup();
        },
        Math.min(options.timeoutMs, MAX_TIMER_MS),
      );
    }
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** `bash -c command` as rudder's own child, in its own process group, reporting to `handlers`. */
function startPlain(
  command: string,
  cwd: string,
  handlers: CommandHandlers,
): CommandProcess & { closeOutput: () => void } {
  let child: ChildProcess;
  try {
    child = childProcess().spawn("bash", ["-c", command], {
      cwd,
      env: withoutCredentials(process.env),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    handlers.onError(`failed to start bash: ${errorText(error)}`);
    handlers.onClose();
    return { terminate: () => {}, closeOutput: () => {} };
  }
  const groupId = child.pid;
  if (groupId !== undefined) registerProcessGroup(groupId);
  child.stdout?.on("data", (chunk: Buffer) => handlers.onData(1, chunk));
  child.stderr?.on("data", (chunk: Buffer) => handlers.onData(2, chunk));
  child.on("error", (error) => {
    handlers.onError(`failed to run bash: ${errorText(error)}`);
    handlers.onClose();
  });
  child.on("exit", (code, signal) => handlers.onExit(code, signal));
  child.on("close", () => handlers.onClose());
  return {
    terminate: () => {
      if (groupId !== undefined) terminateProcessGroup(groupId);
    },
    closeOutput: () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    },
  };
}

function result(
  output: BoundedOutput,
  fields: Partial<Omit<CommandResult, "output" | "truncatedChars">>,
): CommandResult {
  return {
    exitCode: fields.exitCode ?? null,
    signal: fields.signal ?? null,
    output: output.toString(),
    timedOut: fields.timedOut ?? false,
    aborted: fields.aborted ?? false,
    truncatedChars: output.truncatedChars,
    sandboxed: fields.sandboxed ?? false,
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export { installSignalCleanup, killAllProcessGroups } from "./process-groups.js";
