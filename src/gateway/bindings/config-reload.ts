/**
 * Reloads the configuration file when it changes (`fs.watch` on its folder, so an editor that
 * writes a new file and renames it over the old is seen too; changes within `debounceMs` are
 * read once) or when asked (`rudder serve` asks on SIGHUP). A file that is refused (bad JSON, a
 * bad key, or `accept` says no) changes nothing: one line says why, the old configuration stays.
 * Running turns keep what they started with; the pool makes a channel's next process the new
 * way (see `ChannelAgents.key`).
 */
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { GatewayBindings } from "./bindings.js";
import type { ConfigError } from "./config-error.js";
import { type LoadedConfig, loadGatewayConfig } from "./load-gateway-config.js";

export interface ConfigReloadOptions {
  bindings: GatewayBindings;
  logger: (line: string) => void;
  /** Asked before a new configuration is put in place; an Error refuses it with its message. */
  accept?: (loaded: LoadedConfig) => Promise<Error | undefined>;
  /** Default 200. */
  debounceMs?: number;
}

/** What a reload did: put a new configuration in place, found it unchanged, or refused it. */
export type ReloadOutcome =
  | { status: "reloaded"; loaded: LoadedConfig }
  | { status: "unchanged" }
  | { status: "refused"; error: ConfigError | Error };

export class ConfigReload {
  readonly #options: ConfigReloadOptions;
  readonly #file: string;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Reloads run one after another, each reading the file as it is then. */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(file: string, options: ConfigReloadOptions) {
    this.#file = file;
    this.#options = options;
  }

  /** Watches the file's folder; a folder that cannot be watched leaves reloads to `reload()`. */
  start(): void {
    const name = basename(this.#file);
    try {
      this.#watcher = watch(dirname(resolve(this.#file)), (_event, changed) => {
        if (changed !== null && changed !== name) return;
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => void this.reload(), this.#options.debounceMs ?? 200);
      });
      this.#watcher.on("error", () => this.#watcher?.close());
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.#options.logger(`gateway: not watching ${this.#file} (${reason}); SIGHUP reloads it`);
    }
  }

  /** Reads the file again and puts it in place unless it is refused or unchanged. */
  reload(): Promise<ReloadOutcome> {
    const next = this.#chain.then(() => this.#reloadOnce());
    this.#chain = next.catch(() => {});
    return next;
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#watcher?.close();
  }

  async #reloadOnce(): Promise<ReloadOutcome> {
    const { bindings, logger } = this.#options;
    const loaded = await loadGatewayConfig(this.#file);
    const refused = loaded instanceof Error ? loaded : await this.#options.accept?.(loaded);
    if (refused !== undefined) {
      logger(`gateway: configuration not reloaded, the previous one stays: ${refused.message}`);
      return { status: "refused", error: refused };
    }
    const accepted = loaded as LoadedConfig;
    if (accepted.hash === bindings.loaded?.hash) return { status: "unchanged" };
    bindings.replace(accepted);
    logger(`gateway: configuration reloaded from ${this.#file}`);
    return { status: "reloaded", loaded: accepted };
  }
}
