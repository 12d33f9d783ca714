import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import type { LookupFunction } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bubblewrapArgs } from "./bubblewrap-args.js";
import { findExecutable, type ProbeResult, probeBubblewrap } from "./bubblewrap-probe.js";
import { type DomainProxy, startDomainProxy } from "./domain-proxy.js";
import { isExcludedCommand } from "./excluded-command.js";
import { Placeholders } from "./placeholders.js";
import type { SandboxPolicy } from "./sandbox-policy.js";

/** How a bash command is to be started. */
export type PreparedCommand =
  | {
      kind: "sandboxed";
      file: string;
      args: string[];
      /** Call when the command has ended: removes the placeholders it needed. */
      release: () => void;
    }
  | { kind: "plain" }
  | { kind: "refused"; message: string };

/** For `system/init` and the start-up line: `on`, `off` (disabled), `unavailable` (and why). */
export type SandboxStatus =
  | { state: "on" }
  | { state: "off" }
  | { state: "unavailable"; reason: string };

export interface SandboxOptions {
  /** The agent's environment (`PATH` finds bubblewrap). */
  env: NodeJS.ProcessEnv;
  /** Called once with one line when the sandbox turns out not to start. */
  onUnavailable?: (line: string) => void;
  /** How the allow-list proxy resolves host names (tests map names to loopback). */
  lookup?: LookupFunction;
}

/** Commands judged as sandboxed and not yet started are remembered up to this many. */
const MAX_JUDGED = 1000;

/**
 * The sandbox of one agent process. Whether bubblewrap is installed is known
 * at once (a `PATH` lookup); whether it can start is probed once, at the
 * first bash command, so start-up pays nothing. A command the gate judged as
 * sandboxed is never run unconfined: if the probe then fails, it is refused
 * and later ones are judged (and run) without the sandbox.
 */
export class Sandbox {
  readonly policy: SandboxPolicy;
  readonly #bubblewrap: string | undefined;
  readonly #onUnavailable: (line: string) => void;
  readonly #lookup: LookupFunction | undefined;
  #proxy: Promise<DomainProxy | string> | undefined;
  readonly #placeholders = new Placeholders();
  readonly #judged = new Map<string, number>();
  #probe: Promise<ProbeResult> | undefined;
  #failure: string | undefined;
  #stateFolder: string | undefined;
  #cleanupInstalled = false;

  constructor(policy: SandboxPolicy, options: SandboxOptions) {
    this.policy = policy;
    this.#bubblewrap = policy.enabled ? findExecutable("bwrap", options.env.PATH) : undefined;
    if (policy.enabled && this.#bubblewrap === undefined) {
      this.#failure = "bubblewrap (bwrap) is not installed";
    }
    this.#onUnavailable = options.onUnavailable ?? (() => {});
    this.#lookup = options.lookup;
  }

  status(): SandboxStatus {
    if (!this.policy.enabled) return { state: "off" };
    if (this.#failure !== undefined) return { state: "unavailable", reason: this.#failure };
    return { state: "on" };
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
    const file = this.#bubblewrap as string;
    const release = this.#placeholders.acquire(this.policy.protectedInWorkspace);
    const args = bubblewrapArgs(
      this.policy,
      {
        privateTmp: join(this.#stateFolderOnce(), "tmp"),
        cwd: this.policy.workspace,
        ...(proxy === undefined
          ? {}
          : { proxy: { socketPath: proxy.socketPath, node: process.execPath } }),
      },
      command,
    );
    return { kind: "sandboxed", file, args, release };
  }

  /** Removes the private temporary folder and any placeholder. Synchronous; safe to call twice. */
  close(): void {
    this.#placeholders.removeAll();
    const proxy = this.#proxy;
    this.#proxy = undefined;
    void proxy?.then((started) => typeof started === "string" || started.close());
    if (this.#stateFolder !== undefined) {
      rmSync(this.#stateFolder, { recursive: true, force: true });
      this.#stateFolder = undefined;
    }
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
    this.#probe ??= probeBubblewrap(this.#bubblewrap as string).then((result) => {
      if (!result.ok) {
        this.#failure = `bubblewrap cannot start a sandbox here: ${result.reason}`;
        this.#onUnavailable(unavailableLine(this.#failure, this.policy.failIfUnavailable));
        return { ok: false, reason: this.#failure };
      }
      return result;
    });
    return this.#probe;
  }

  /** With an allow-list of domains, the proxy (started once); undefined without one; a string when it failed. */
  #proxyOnce(): Promise<DomainProxy | string | undefined> {
    const network = this.policy.network;
    if (network.kind !== "domains") return Promise.resolve(undefined);
    this.#proxy ??= startDomainProxy({
      socketPath: join(this.#stateFolderOnce(), "proxy.sock"),
      allowed: network.allowed,
      denied: network.denied,
      ...(this.#lookup === undefined ? {} : { lookup: this.#lookup }),
    }).catch((error: Error) => error.message);
    return this.#proxy;
  }

  /** The host folder holding the private /tmp (`tmp/`) and the proxy's socket. */
  #stateFolderOnce(): string {
    if (this.#stateFolder === undefined) {
      this.#stateFolder = mkdtempSync(join(tmpdir(), "rudder-sandbox-"));
      mkdirSync(join(this.#stateFolder, "tmp"));
      if (!this.#cleanupInstalled) {
        this.#cleanupInstalled = true;
        process.once("exit", () => this.close());
      }
    }
    return this.#stateFolder;
  }
}

/** The one line saying the sandbox is off for want of bubblewrap, and what happens instead. */
export function unavailableLine(reason: string, failIfUnavailable: boolean): string {
  return failIfUnavailable
    ? `the sandbox is unavailable (${reason}) and sandbox.failIfUnavailable is set: bash commands are refused`
    : `the sandbox is unavailable (${reason}): bash commands run unconfined, and ask unless known read-only`;
}
