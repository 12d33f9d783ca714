/**
 * The gateway's side of its agent spawner (`spawner-main.ts`): started once, lazily, at the first
 * agent start, in a process group of its own with the parent-death signal; asked over IPC to
 * start each agent, which it hands back as a `RemoteChild` at once (the pid and pipes follow).
 * So no agent's spawn holds the gateway's event loop, whose turns stay short enough to take a
 * burst's connections as they come.
 *
 * Failures: a spawner that exits takes its agents with it (their parent-death signal; their
 * groups are killed here too), and they are reported as ended (`exit`, SIGKILL), not left
 * hanging; starts it had not reported are asked of a new spawner. A spawner that cannot start
 * (or dies three times in a minute) is given up with one log line: agents are then spawned
 * directly, as `rudder run` does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import { withParentDeathSignal } from "../parent-death.js";
import { signal } from "../process-tree.js";
import { spawnDirect } from "../spawn-direct.js";
import type { ChildSpawner, SpawnedChild, SpawnOptions } from "../spawned-child.js";
import { RemoteChild } from "./remote-child.js";
import type { SpawnerReport, SpawnRequest } from "./spawner-messages.js";

/** Unexpected exits within `RESTART_WINDOW_MS` after which the spawner is given up. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
/** How long `close()` waits for the spawner to end its children and exit. */
const CLOSE_WAIT_MS = 5000;

export interface AgentSpawnerOptions {
  log: (line: string) => void;
  /** The spawner's command line (tests); default this Node running `spawner-main`. */
  command?: readonly string[];
  /**
   * When the gateway is gone: how long the spawner gives its agents between SIGTERM and
   * SIGKILL; default 2000 ms.
   */
  graceMs?: number;
}

/** Node running `spawner-main`: the built file, or from source through tsx (tests, benches). */
export function spawnerCommand(): string[] {
  const built = fileURLToPath(new URL("./spawner-main.js", import.meta.url));
  if (existsSync(built)) return [process.execPath, built];
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return [process.execPath, "--import", tsx, built.replace(/\.js$/, ".ts")];
}

/** A direct start joined to a `RemoteChild` already handed out (the spawner given up). */
function adopt(remote: RemoteChild, child: ChildProcess): void {
  const pid = child.pid;
  child.on("error", (error) => {
    if (pid === undefined) remote.failed(error);
  });
  if (pid === undefined) return;
  remote.started(pid);
  remote.join("stdin", child.stdin as Socket);
  remote.join("stdout", child.stdout as Socket);
  remote.join("stderr", child.stderr as Socket);
  child.on("exit", (code, exitSignal) => remote.exited(code, exitSignal));
}

export class AgentSpawner implements ChildSpawner {
  readonly #log: (line: string) => void;
  readonly #command: readonly string[] | undefined;
  readonly #graceMs: number;
  readonly #children = new Map<number, { child: RemoteChild; request: SpawnRequest }>();
  #process: ChildProcess | undefined;
  #ready = false;
  #nextId = 1;
  /** Given up: agents are spawned directly. */
  #direct = false;
  #closed = false;
  #exits: number[] = [];

  constructor(options: AgentSpawnerOptions) {
    this.#log = options.log;
    this.#command = options.command;
    this.#graceMs = options.graceMs ?? 2000;
  }

  /** The spawner's pid while one runs (tests). */
  get pid(): number | undefined {
    return this.#process?.pid;
  }

  spawn(command: readonly string[], options: SpawnOptions): SpawnedChild {
    if (this.#direct || this.#closed) return spawnDirect(command, options);
    const request: SpawnRequest = {
      type: "spawn",
      id: this.#nextId,
      command: [...command],
      cwd: options.cwd,
      env: options.env,
      niceness: options.niceness,
      owned: options.owned,
    };
    this.#nextId += 1;
    const child = new RemoteChild();
    this.#children.set(request.id, { child, request });
    this.#ask(request);
    return child;
  }

  /** Ends the spawner (which ends what it still runs) and waits for it, at most 5 s. */
  async close(): Promise<void> {
    this.#closed = true;
    const spawner = this.#process;
    if (spawner === undefined) return;
    const exited = new Promise<void>((resolve) => spawner.once("exit", () => resolve()));
    if (spawner.exitCode === null && spawner.signalCode === null) {
      if (spawner.connected) spawner.disconnect();
      const pid = spawner.pid;
      const timer = setTimeout(() => pid && signal(-pid, "SIGKILL"), CLOSE_WAIT_MS);
      await exited;
      clearTimeout(timer);
    }
  }

  #ask(request: SpawnRequest): void {
    const spawner = this.#process ?? this.#start();
    if (spawner === undefined) return;
    spawner.send(request, () => {
      // A request not sent is still waiting: the spawner's exit asks it again or gives up.
    });
  }

  #start(): ChildProcess | undefined {
    const [binary = process.execPath, ...args] = withParentDeathSignal([
      ...(this.#command ?? spawnerCommand()),
      String(this.#graceMs),
    ]);
    const spawner = spawn(binary, args, {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      // Its own group: Ctrl-C in a terminal is the gateway's; the spawner ends on disconnect.
      detached: true,
    });
    this.#process = spawner;
    this.#ready = false;
    let lost = false;
    const onLost = (reason: string) => {
      if (lost) return;
      lost = true;
      this.#lost(spawner, reason);
    };
    spawner.on("error", (error) => onLost(error.message));
    spawner.on("exit", (code, exitSignal) =>
      onLost(exitSignal ? `killed by ${exitSignal}` : `exit code ${code}`),
    );
    spawner.on("message", (message: SpawnerReport, handle: unknown) =>
      this.#onReport(message, handle as Socket | undefined),
    );
    let partial = "";
    spawner.stderr?.setEncoding("utf8").on("data", (text: string) => {
      const lines = (partial + text).split("\n");
      partial = (lines.pop() ?? "").slice(-1000);
      for (const line of lines) if (line !== "") this.#log(`gateway: agent spawner: ${line}`);
    });
    // The gateway's own work keeps it alive; the spawner never does.
    spawner.unref();
    (spawner.channel as { unref?: () => void } | undefined)?.unref?.();
    return spawner;
  }

  #onReport(message: SpawnerReport, handle: Socket | undefined): void {
    if (message.type === "ready") {
      this.#ready = true;
      return;
    }
    const entry = this.#children.get(message.id);
    if (entry === undefined) {
      handle?.destroy();
      return;
    }
    const { child } = entry;
    switch (message.type) {
      case "spawned":
        child.started(message.pid);
        return;
      case "stdio":
        if (handle) child.join(message.stream, handle);
        return;
      case "exit":
        this.#children.delete(message.id);
        child.exited(message.code, message.signal);
        return;
      case "error":
        this.#children.delete(message.id);
        child.failed(Object.assign(new Error(message.message), { code: message.code }));
        return;
    }
  }

  #lost(spawner: ChildProcess, reason: string): void {
    if (this.#process !== spawner) return;
    this.#process = undefined;
    const wasReady = this.#ready;
    const running = [...this.#children.values()].filter(({ child }) => !child.starting);
    const waiting = [...this.#children.values()].filter(({ child }) => child.starting);
    for (const { child, request } of running) {
      this.#children.delete(request.id);
      // Their parent-death signal has fired; the group goes too, whatever it held.
      if (child.pid !== undefined) signal(-child.pid, "SIGKILL");
      child.exited(null, "SIGKILL");
    }
    if (this.#closed) {
      for (const { child, request } of waiting) {
        this.#children.delete(request.id);
        child.failed(new Error("the gateway is closing"));
      }
      return;
    }
    const now = Date.now();
    this.#exits = [...this.#exits.filter((at) => now - at < RESTART_WINDOW_MS), now];
    const giveUp = !wasReady || this.#exits.length >= MAX_RESTARTS;
    this.#log(
      `gateway: the agent spawner ${wasReady ? "exited" : "could not start"} (${reason})` +
        (running.length > 0 ? `; ${running.length} agents it ran ended` : "") +
        (giveUp
          ? ": agents are started from the gateway itself from now on"
          : waiting.length > 0
            ? `; ${waiting.length} starts asked again of a new one`
            : ""),
    );
    if (giveUp) this.#direct = true;
    for (const { child, request } of waiting) {
      if (giveUp) {
        this.#children.delete(request.id);
        adopt(child, spawnDirect(request.command, request));
      } else {
        this.#ask(request);
      }
    }
  }
}
