import type { ChildProcess } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { spawnOwned } from "../sandbox/owned-spawn.js";
import { registerProcessGroup, terminateProcessGroup } from "../tools/process-groups.js";

/** How much of a server's stderr is kept for messages. */
const STDERR_TAIL_CHARS = 4000;

export interface ProcessTransportOptions {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * An MCP stdio client transport over a child that rudder owns: spawned
 * detached (its own process group, registered so rudder's exit and SIGTERM
 * kill it, and SIGKILLed with rudder when rudder itself is: `spawnOwned`), stderr drained into a bounded tail, and the whole group killed on
 * `close()` or when the server exits (a grandchild it left is not kept).
 * The SDK's StdioClientTransport cannot spawn detached, hence this one.
 */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: ProcessTransportOptions;
  readonly #readBuffer = new ReadBuffer();
  #child: ChildProcess | undefined;
  #stderrTail = "";
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #exited: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: ProcessTransportOptions) {
    this.#options = options;
  }

  /** The server's pid (and process group id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The last few thousand characters the server wrote to stderr. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /** How the server ended ("exited with status 3", "killed by SIGKILL"), or undefined while it runs. */
  get exitDescription(): string | undefined {
    if (this.#exit === undefined) return undefined;
    return this.#exit.signal === null
      ? `exited with status ${this.#exit.code}`
      : `killed by ${this.#exit.signal}`;
  }

  start(): Promise<void> {
    if (this.#child !== undefined) return Promise.reject(new Error("already started"));
    const child = spawnOwned(this.#options.command, this.#options.args, {
      cwd: this.#options.cwd,
      env: this.#options.env,
    });
    this.#child = child;
    this.#exited = new Promise((resolveExit) => {
      child.once("exit", (code, signal) => {
        this.#exit = { code, signal };
        if (child.pid !== undefined) terminateProcessGroup(child.pid);
        resolveExit();
        this.#finish();
      });
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.#stderrTail = (this.#stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    child.stdout?.on("data", (chunk: Buffer) => this.#receive(chunk));
    // An idle server does not keep rudder alive (a request in flight does, by
    // its timeout timer): a front end that forgot close() still exits, and
    // the exit handler kills the group.
    child.unref();
    for (const stream of child.stdio) {
      stream?.on("error", (error) => this.onerror?.(error));
      (stream as { unref?: () => void } | null)?.unref?.();
    }
    return new Promise((resolveStart, rejectStart) => {
      child.once("spawn", () => {
        if (child.pid !== undefined) registerProcessGroup(child.pid, this.#exited);
        resolveStart();
      });
      child.once("error", (error) => {
        // A failed spawn emits no "exit": the transport is over.
        rejectStart(error);
        this.onerror?.(error);
        this.#finish();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (this.#closed || this.#exit !== undefined || stdin == null || !stdin.writable) {
      return Promise.reject(
        new Error(`not connected (the server ${this.exitDescription ?? "is closed"})`),
      );
    }
    return new Promise((resolveSend, rejectSend) => {
      stdin.write(serializeMessage(message), (error) =>
        error == null ? resolveSend() : rejectSend(error),
      );
    });
  }

  /**
   * Resolves once the server has exited, or after `ms`: a write to a server that is dying fails
   * (EPIPE) before its exit is seen, and the exit says why.
   */
  async exitWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#exited,
      new Promise<void>((resolveWait) => {
        timer = setTimeout(resolveWait, ms);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Kills the server's process group (SIGTERM, grace, SIGKILL) and waits for it to exit. */
  async close(): Promise<void> {
    const child = this.#child;
    if (child !== undefined && this.#exit === undefined && child.pid !== undefined) {
      child.ref();
      child.stdin?.end();
      terminateProcessGroup(child.pid);
      await this.#exited;
    }
    this.#finish();
  }

  #receive(chunk: Buffer): void {
    try {
      this.#readBuffer.append(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#readBuffer.clear();
    this.onclose?.();
  }
}
