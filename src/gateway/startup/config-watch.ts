/**
 * A step of `startGateway` when the bindings came from a file: its reload on change (and on
 * `RunningGateway.reloadConfig`, which `rudder serve` calls on SIGHUP).
 */
import { ConfigReload, type ReloadOutcome } from "../bindings/config-reload.js";
import type { AgentRuntime } from "./agent-runtime.js";

export interface ConfigWatch {
  reload(): Promise<ReloadOutcome>;
  stop(): void;
}

export function watchConfig(
  { bindings }: AgentRuntime,
  log: (line: string) => void,
  debounceMs?: number,
): ConfigWatch {
  const file = bindings.loaded?.file;
  if (file === undefined) {
    return { reload: async () => ({ status: "unchanged" }), stop: () => {} };
  }
  const watcher = new ConfigReload(file, {
    bindings,
    logger: log,
    ...(debounceMs === undefined ? {} : { debounceMs }),
  });
  watcher.start();
  return watcher;
}
