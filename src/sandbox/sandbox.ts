import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import type { LookupFunction } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bubblewrapArgs, type RunnerProgram } from "./bubblewrap-args.js";
import { findExecutable, type ProbeResult, probeBubblewrap } from "./bubblewrap-probe.js";
import type { CommandHandlers, CommandProcess } from "./command-process.js";
import type { DomainProxy } from "./domain-proxy.js";
import { isExcludedCommand } from "./excluded-command.js";
import { closeAtExit } from "./open-sandboxes.js";
import { createPidsCgroup, ownPidsFolder } from "./pids-cgroup.js";
import { Placeholders } from "./placeholders.js";
import { RunningSandboxes } from "./running-sandboxes.js";
import { commandEnvironment, runnerEnvironment } from "./sandbox-environment.js";
import { sandboxFilters } from "./sandbox-filters.js";
import type { SandboxPolicy } from "./sandbox-policy.js";
import { SandboxRunner } from "./sandbox-runner.js";
import { type SandboxStatus, unavailableLine } from "./sandbox-status.js";
import { STATE_PREFIX, sweepStale } from "./stale-sweep.js";
import { guardedHandlers, WorkspaceGuard } from "./workspace-guard.js";
import { guardMounts } from "./workspace-snapshot.js";

/** How a bash command is to be started. */
export type PreparedCommand =
  | {
      kind: "sandboxed";
      /** Starts it in `cwd` inside the session's sandbox (started now if none fits). */
      start: (cwd: string, handlers: CommandHandlers) => CommandProcess;
    }
  | { kind: "plain" }
  | { kind: "refused"; message: string };

/** How a sandbox's processes are capped (`Sandbox.processLimit`). */
export type ProcessLimitKind = "cgroup" | "ulimit" | "none";

export interface SandboxOptions {
  /** The agent's environment (`PATH` finds bubblewrap). */
  env: NodeJS.ProcessEnv;
  /** Called once with one line when the sandbox turns out not to start. */
  onUnavailable?: (line: string) => void;
  /** How the allow-list proxy resolves host names (tests map names to loopback). */
  lookup?: LookupFunction;
  /** Let the allow-list proxy reach loopback addresses (tests, whose servers are there). */
  reachLoopback?: boolean;
  /**
   * What runs the runner inside: perl when it is on `PATH` (it starts in a few milliseconds),
   * else node (some sixty). Tests choose.
   */
  runner?: RunnerProgram["kind"];
}

/** Commands judged as sandboxed and not yet started are remembered up to this many. */
const MAX_JUDGED = 1000;

/** The runner's grace period between SIGTERM and SIGKILL of a command's group (as for plain commands). */
const KILL_GRACE_MS = 200;

/**
 * The sandbox of one agent process. Whether bubblewrap is installed is known
 * at once (a `PATH` lookup); whether it can start is probed once, as the
 * model is first asked (`warm`: the session's sandbox coming up is the probe,
 * bubblewrap alone is tried only if it does not) or at the first bash
 * command, so start-up pays nothing. A command the gate judged as
 * sandboxed is never run unconfined: if the probe then fails, it is refused
 * and later ones are judged (and run) without the sandbox.
 *
 * Commands run in one long-lived sandbox (`SandboxRunner`), started at the
 * first and kept while its confinement still fits: before each command the
 * mounts are worked out again (a protected path or a secret may have
 * appeared meanwhile, `git init` making `.git/config`), and when they differ
 * a new sandbox takes the next commands while the old one ends with its
 * last running command. Each sandbox may hold `maxProcesses` processes: by
 * `ulimit -u` inside (its own user namespace counts only its processes) and,
 * where rudder may make one (root, which the limit does not bind), a pids
 * cgroup of its own.
 */
export class Sandbox {
  readonly policy: SandboxPolicy;
  readonly #bubblewrap: string | undefined;
  readonly #onUnavailable: (line: string) => void;
  readonly #lookup: LookupFunction | undefined;
  readonly #reachLoopback: boolean;
  readonly #path: string | undefined;
  readonly #runnerKind: RunnerProgram["kind"] | undefined;
  #runnerProgram: RunnerProgram | undefined;
  #proxy: Promise<DomainProxy | string> | undefined;
  readonly #placeholders = new Placeholders();
  readonly #guard: WorkspaceGuard;
  readonly #protectedPaths: ReadonlySet<string>;
  readonly #judged = new Map<string, number>();
  readonly #running = new RunningSandboxes(this.#placeholders, () => this.#stateFolder);
  /** How many sandboxes this session has started (names their cgroups). */
  #started = 0;
  #processLimit: ProcessLimitKind | undefined;
  #probe: Promise<ProbeResult> | undefined;
  #failure: string | undefined;
  #stateFolder: string | undefined;
  /** Ends this sandbox's registration for closing at exit; set while it has a state folder. */
  #forgetAtExit: (() => void) | undefined;
  #swept = false;
  #warmed = false;
  #closed = false;

  constructor(policy: SandboxPolicy, options: SandboxOptions) {
    this.policy = policy;
    this.#bubblewrap = policy.enabled ? findExecutable("bwrap", options.env.PATH) : undefined;
    if (policy.enabled && this.#bubblewrap === undefined) {
      this.#failure = "bubblewrap (bwrap) is not installed";
    }
    this.#onUnavailable = options.onUnavailable ?? (() => {});
    this.#lookup = options.lookup;
    this.#reachLoopback = options.reachLoopback === true;
    this.#path = options.env.PATH;
    this.#runnerKind = options.runner;
    this.#protectedPaths = new Set(policy.protectedInWorkspace);
    this.#guard = new WorkspaceGuard(policy.workspace, { own: () => this.#placeholders.paths() });
  }

  status(): SandboxStatus {
    if (!this.policy.enabled) return { state: "off" };
    if (this.#failure !== undefined) return { state: "unavailable", reason: this.#failure };
    return { state: "on" };
  }

  /**
   * How the last sandbox started caps its processes: a pids cgroup, `ulimit
   * -u` alone (not root), or not at all (root, and no cgroup to be had);
   * undefined before the first sandboxed command.
   */
  processLimit(): ProcessLimitKind | undefined {
    return this.#processLimit;
  }

  /**
   * Whether `command` will run confined: for the gate, which lets sandboxed
   * commands run without asking. Synchronous; optimistic until the probe has
   * answered, and a command judged so is then refused rather than run plain.
   */
  confines(command: string): boolean {
    if (this.status().state !== "on") return false;
    if (isExcludedCommand(command, this.policy.excludedCommands)) return false;
    if (this.#judged.size < MAX_JUDGED) {
      this.#judged.set(command, (this.#judged.get(command) ?? 0) + 1);
    }
    return true;
  }

  /**
   * Starts the sandbox ahead of the first command (the probe, the proxy, the
   * runner), so its start-up overlaps the model's reply instead of delaying
   * the first bash call. Once per session; a failure here is met again, and
   * reported, by the command that needs the sandbox.
   */
  warm(): void {
    if (this.#warmed || this.status().state !== "on") return;
    this.#warmed = true;
    if (this.policy.network.kind !== "domains" && this.#probe === undefined) {
      // No proxy to wait for: the runner's own start is the probe, so one sandbox starts, not
      // two one after the other. Only if it fails is bubblewrap probed alone, so that a sandbox
      // broken by something else (a mount) is not taken for bubblewrap unable to start.
      // After the model's request has gone out: the sandbox's mounts need a walk of the
      // workspace for its guarded paths first (workspace-snapshot.ts).
      this.#probe = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        if (this.#closed) return { ok: false, reason: "the sandbox was closed" };
        const runner = this.#runnerNow(undefined);
        return runner.ready.then((ready) => (ready ? { ok: true } : this.#probeBubblewrap()));
      });
      return;
    }
    void this.#probeOnce().then(async (probe) => {
      if (!probe.ok) return;
      const proxy = await this.#proxyOnce();
      if (typeof proxy === "string" || this.#closed) return;
      if (this.#running.current === undefined) this.#runnerNow(proxy?.socketPath);
    });
  }

  /** How to start `command` in `cwd`. Never rejects. */
  async prepare(command: string): Promise<PreparedCommand> {
    const judgedSandboxed = this.#forget(command);
    if (!this.policy.enabled) return { kind: "plain" };
    if (isExcludedCommand(command, this.policy.excludedCommands)) return { kind: "plain" };
    const probe = await this.#probeOnce();
    if (!probe.ok) {
      if (this.policy.failIfUnavailable) {
        return {
          kind: "refused",
          message:
            `the sandbox cannot start (${probe.reason}) and sandbox.failIfUnavailable is set: ` +
            "bash commands are not run",
        };
      }
      if (judgedSandboxed) {
        return {
          kind: "refused",
          message:
            `the sandbox cannot start (${probe.reason}), so this command was not run; ` +
            "bash commands now run without the sandbox, with permission asked as usual",
        };
      }
      return { kind: "plain" };
    }
    const proxy = await this.#proxyOnce();
    if (typeof proxy === "string") {
      return { kind: "refused", message: `the sandbox's network proxy cannot start: ${proxy}` };
    }
    const socketPath = proxy?.socketPath;
    return {
      kind: "sandboxed",
      start: (cwd, handlers) => {
        this.#guard.begin();
        return this.#runnerNow(socketPath).run(
          command,
          cwd,
          commandEnvironment(process.env, socketPath !== undefined),
          guardedHandlers(this.#guard, handlers),
        );
      },
    };
  }

  /** The sandbox that fits the policy now: the running one, or a new one. */
  #runnerNow(proxySocket: string | undefined): SandboxRunner {
    const stateFolder = this.#stateFolderOnce();
    const release = this.#placeholders.acquire(this.policy.protectedInWorkspace);
    const runnerProgram = this.#runnerProgramOnce();
    const filters = sandboxFilters(this.policy, runnerProgram, proxySocket);
    const snapshot = this.#guard.prime();
    const args = bubblewrapArgs(this.policy, {
      ...(snapshot === undefined ? {} : { guarded: guardMounts(snapshot, this.#protectedPaths) }),
      ...filters.layout,
      privateTmp: join(stateFolder, "tmp"),
      runner: runnerProgram,
      graceMs: KILL_GRACE_MS,
      maxProcesses: this.policy.maxProcesses,
      ...(proxySocket === undefined ? {} : { proxySocket }),
    });
    const key = args.join("\0");
    const current = this.#running.current;
    if (current?.usable && current.key === key) {
      release();
      return current;
    }
    if (current !== undefined) this.#running.endWhenIdle(current);
    this.#started += 1;
    const cgroup = createPidsCgroup(
      `${STATE_PREFIX}${process.pid}-${this.#started}`,
      this.policy.maxProcesses,
    );
    this.#processLimit =
      cgroup !== undefined ? "cgroup" : process.getuid?.() === 0 ? "none" : "ulimit";
    const runner: SandboxRunner = new SandboxRunner(this.#bubblewrap as string, args, {
      key,
      ...(cgroup === undefined ? {} : { cgroup }),
      ...filters.runner,
      env: runnerEnvironment(commandEnvironment(process.env, proxySocket !== undefined)),
      onIdle: () => {
        if (runner !== this.#running.current || !runner.usable) this.#running.endWhenIdle(runner);
      },
    });
    this.#running.add(runner, release);
    return runner;
  }

  /** perl if it is here (and not ruled out), else the node running rudder. Looked up once. */
  #runnerProgramOnce(): RunnerProgram {
    if (this.#runnerProgram === undefined) {
      const perl = this.#runnerKind === "node" ? undefined : findExecutable("perl", this.#path);
      this.#runnerProgram =
        perl === undefined
          ? { kind: "node", path: process.execPath }
          : { kind: "perl", path: perl };
    }
    return this.#runnerProgram;
  }

  /** Removes the private temporary folder and any placeholder. Synchronous; safe to call twice. */
  close(): void {
    this.#closed = true;
    this.#running.closeAll();
    this.#placeholders.removeAll();
    const proxy = this.#proxy;
    this.#proxy = undefined;
    void proxy?.then((started) => typeof started === "string" || started.close());
    if (this.#stateFolder !== undefined) {
      rmSync(this.#stateFolder, { recursive: true, force: true });
      this.#stateFolder = undefined;
    }
    this.#forgetAtExit?.();
    this.#forgetAtExit = undefined;
  }

  #forget(command: string): boolean {
    const count = this.#judged.get(command);
    if (count === undefined) return false;
    if (count <= 1) this.#judged.delete(command);
    else this.#judged.set(command, count - 1);
    return true;
  }

  #probeOnce(): Promise<ProbeResult> {
    if (this.#failure !== undefined) {
      return Promise.resolve({ ok: false, reason: this.#failure });
    }
    this.#probe ??= this.#probeBubblewrap();
    return this.#probe;
  }

  /** One run of bubblewrap on `true`; when it fails, the sandbox is unavailable from then on. */
  #probeBubblewrap(): Promise<ProbeResult> {
    if (this.#closed) return Promise.resolve({ ok: false, reason: "the sandbox was closed" });
    return probeBubblewrap(this.#bubblewrap as string).then((result) => {
      if (!result.ok) {
        this.#failure = `bubblewrap cannot start a sandbox here: ${result.reason}`;
        this.#onUnavailable(unavailableLine(this.#failure, this.policy.failIfUnavailable));
        // The sandbox started ahead (`warm`) failed too: its stand-ins go now, not at the end.
        this.#running.endAll();
        return { ok: false, reason: this.#failure };
      }
      return result;
    });
  }

  /** With an allow-list of domains, the proxy (started once); undefined without one; a string when it failed. */
  #proxyOnce(): Promise<DomainProxy | string | undefined> {
    const network = this.policy.network;
    if (network.kind !== "domains") return Promise.resolve(undefined);
    if (this.#proxy !== undefined) return this.#proxy;
    const socketPath = join(this.#stateFolderOnce(), "proxy.sock");
    // Loaded with its first use: only an allow-list of domains needs it (and node:dns).
    this.#proxy = import("./domain-proxy.js")
      .then(({ startDomainProxy }) =>
        startDomainProxy({
          socketPath,
          allowed: network.allowed,
          denied: network.denied,
          ...(this.#lookup === undefined ? {} : { lookup: this.#lookup }),
          reachLoopback: this.#reachLoopback,
        }),
      )
      .catch((error: Error) => error.message);
    return this.#proxy;
  }

  /**
   * The host folder holding the private /tmp (`tmp/`), the proxy's socket and
   * the list of stand-ins, named after rudder's pid. Made at the first
   * sandboxed command, after sweeping what a SIGKILLed rudder left.
   */
  #stateFolderOnce(): string {
    if (this.#stateFolder === undefined) {
      if (!this.#swept) {
        this.#swept = true;
        sweepStale(tmpdir(), ownPidsFolder());
      }
      this.#stateFolder = mkdtempSync(join(tmpdir(), `${STATE_PREFIX}${process.pid}-`));
      mkdirSync(join(this.#stateFolder, "tmp"));
      this.#forgetAtExit ??= closeAtExit(this);
    }
    return this.#stateFolder;
  }
}
