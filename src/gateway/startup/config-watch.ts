/**
 * A step of `startGateway`: the configuration's reload on change of its file (and on
 * `RunningGateway.reloadConfig`, which `rudder serve` calls on SIGHUP) and, on PostgreSQL, the
 * workers' agreement on it: a worker whose configuration differs from the running workers' is
 * refused at start (see store/postgres/config-agreement.ts), and a reload moves it along.
 */
import { ConfigReload, type ReloadOutcome } from "../bindings/config-reload.js";
import type { GatewayOptions } from "../gateway-options.js";
import type { AgentRuntime } from "./agent-runtime.js";

export interface ConfigWatch {
  /** On PostgreSQL: joins the running workers, or throws the one line refusing this one. */
  agree(): Promise<void>;
  reload(): Promise<ReloadOutcome>;
  stop(): Promise<void>;
}

interface Hold {
  change(hash: string | null): Promise<void>;
  close(): Promise<void>;
}

export function watchConfig(
  options: GatewayOptions,
  { bindings }: AgentRuntime,
  log: (line: string) => void,
): ConfigWatch {
  const file = bindings.loaded?.file;
  let hold: Hold | undefined;
  const location = options.store;
  const agree = async () => {
    if (location?.kind !== "postgres") return;
    const { ConfigAgreement } = await import("../store/postgres/config-agreement.js");
    const joined = await ConfigAgreement.join(location.url, bindings.loaded?.hash ?? null);
    if (joined instanceof Error) throw joined;
    hold = joined;
  };
  const watcher =
    file === undefined
      ? undefined
      : new ConfigReload(file, {
          bindings,
          logger: log,
          accept: async (loaded) => {
            // The database unreachable now: the lock is taken again when it is back.
            await hold?.change(loaded.hash).catch(() => {});
            return undefined;
          },
        });
  watcher?.start();
  return {
    agree,
    reload: () => watcher?.reload() ?? Promise.resolve({ status: "unchanged" }),
    stop: async () => {
      watcher?.stop();
      await hold?.close();
    },
  };
}
