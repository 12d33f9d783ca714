/**
 * The sandboxes one session has running: the newest (`current`) takes new commands while its
 * confinement still fits; an older one ends with its last running command. Each holds the
 * placeholders it mounted (released when it ends), and the list of every placeholder is kept
 * in the state folder for the sweep after a SIGKILL (`sweepStale`).
 */
import { writeFileSync } from "node:fs";
import type { Placeholders } from "./placeholders.js";
import type { SandboxRunner } from "./sandbox-runner.js";
import { PLACEHOLDER_MANIFEST } from "./stale-sweep.js";

export class RunningSandboxes {
  /** Every sandbox still running, with what releases its placeholders. */
  readonly #runners = new Map<SandboxRunner, () => void>();
  #current: SandboxRunner | undefined;
  readonly #placeholders: Placeholders;
  readonly #stateFolder: () => string | undefined;

  /** `stateFolder`: where the list of placeholders is written (undefined: none made yet). */
  constructor(placeholders: Placeholders, stateFolder: () => string | undefined) {
    this.#placeholders = placeholders;
    this.#stateFolder = stateFolder;
  }

  /** The sandbox taking new commands, if one runs. */
  get current(): SandboxRunner | undefined {
    return this.#current;
  }

  /** `runner` takes new commands from now on; `release` frees its placeholders when it ends. */
  add(runner: SandboxRunner, release: () => void): void {
    this.#runners.set(runner, release);
    this.#current = runner;
    this.#record();
  }

  /** Ends `runner` now if nothing runs in it, else once its last command has closed. */
  endWhenIdle(runner: SandboxRunner): void {
    if (this.#current === runner) this.#current = undefined;
    if (runner.running > 0) return;
    runner.close();
    this.#runners.get(runner)?.();
    this.#runners.delete(runner);
    this.#record();
  }

  /** Ends every sandbox at once and releases their placeholders. */
  endAll(): void {
    for (const [runner, release] of this.#runners) {
      runner.close();
      release();
    }
    this.#runners.clear();
    this.#current = undefined;
    this.#record();
  }

  /** Ends every sandbox at once, the placeholders left to the caller (closing removes them all). */
  closeAll(): void {
    for (const runner of this.#runners.keys()) runner.close();
    this.#runners.clear();
    this.#current = undefined;
  }

  #record(): void {
    const folder = this.#stateFolder();
    if (folder === undefined) return;
    try {
      writeFileSync(
        `${folder}/${PLACEHOLDER_MANIFEST}`,
        JSON.stringify(this.#placeholders.paths()),
      );
    } catch {
      // The state folder is gone (closing): nothing to sweep later either.
    }
  }
}
