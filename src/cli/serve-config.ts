/**
 * `rudder serve`'s bindings: the configuration file (`--config FILE`, else `config.json` in the
 * data folder when there is one) over the command line's folder, engine and model, which fill
 * only what the file's `defaults` leave out: the file, which is reloaded and which every worker
 * of a shared store must agree on, wins. Also how a binding's agents are run and described.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  type AgentInfo,
  type BindingFallback,
  type ConfigError,
  GatewayBindings,
  type GatewayEngine,
  loadGatewayConfig,
  type ResolvedBinding,
} from "../gateway/index.js";
import { hasModelCredentials } from "../model/model-config.js";
import {
  type DataFolderWrapper,
  dataFolderCommand,
  dataFolderWrapper,
} from "./data-folder-wrapper.js";
import { gatewayEngine } from "./gateway-engine.js";
import { serveAgentInfo } from "./serve-agent-info.js";

export interface ServeConfigOptions {
  /** `--config`: a file that must exist. */
  configFlag: string | undefined;
  dataDir: string;
  /** From `--cwd`, `--engine`, `--model`. */
  fallback: BindingFallback;
  noSandbox: boolean;
  env: NodeJS.ProcessEnv;
}

export interface ServeConfig {
  bindings: GatewayBindings;
  /**
   * How Claude Code agents are kept from the data folder (data-folder-wrapper.ts), once
   * bubblewrap has been tried (before `serveConfig` resolves when a binding runs Claude Code);
   * undefined until then, or when nothing can run Claude Code (no such binding, no file).
   */
  wrapper: DataFolderWrapper | undefined;
  engineFor(binding: ResolvedBinding, model: string | undefined): GatewayEngine;
  infoFor(binding: ResolvedBinding, model: string | undefined): Promise<AgentInfo>;
  /** Whether a binding without a model runs the offline demo model (rudder, no credentials). */
  demoFor(binding: ResolvedBinding): boolean;
  /** A chat source's section of the file (`slack`), with the folder its paths are relative to. */
  sourceSection(
    name: "telegram" | "slack" | "discord",
  ): { values: Record<string, unknown>; folder: string } | undefined;
}

/** The file `rudder serve` reads: `--config`, else the data folder's `config.json` if present. */
export function configFile(configFlag: string | undefined, dataDir: string): string | undefined {
  if (configFlag !== undefined) return configFlag;
  const inData = join(dataDir, "config.json");
  return existsSync(inData) ? inData : undefined;
}

export async function serveConfig(options: ServeConfigOptions): Promise<ServeConfig | ConfigError> {
  const { env, noSandbox } = options;
  const file = configFile(options.configFlag, options.dataDir);
  const loaded = file === undefined ? undefined : await loadGatewayConfig(file);
  if (loaded instanceof Error) return loaded;
  const bindings = new GatewayBindings(loaded, options.fallback);
  // Tried as it starts when a binding runs Claude Code; with a file, which a reload may give
  // such bindings, in the background, and until that answer such agents are wrapped untried
  // (a bubblewrap that cannot start fails their start; it never leaves the folder shown).
  const claudeAtStart = bindings.list().some((binding) => binding.engine === "claude");
  const probe =
    claudeAtStart || file !== undefined ? dataFolderWrapper(options.dataDir, env) : undefined;
  let wrapper = claudeAtStart ? await probe : undefined;
  void probe?.then((probed) => {
    wrapper = probed;
  });
  const demoFor = (binding: ResolvedBinding) =>
    binding.engine === "rudder" && binding.model === undefined && !hasModelCredentials(env);
  const modelOf = (binding: ResolvedBinding, model: string | undefined) =>
    model ?? (demoFor(binding) ? "demo" : undefined);
  return {
    bindings,
    get wrapper() {
      return wrapper;
    },
    demoFor,
    sourceSection: (name) => {
      const values = loaded?.config[name];
      return loaded && values ? { values, folder: dirname(loaded.file) } : undefined;
    },
    engineFor: (binding, model) =>
      gatewayEngine(binding.engine, {
        cwd: binding.cwd,
        model: modelOf(binding, model),
        noSandbox,
        env,
        wrapper: wrapper ?? dataFolderCommand(options.dataDir, env),
      }),
    infoFor: (binding, model) =>
      serveAgentInfo({
        engine: binding.engine,
        cwd: binding.cwd,
        model: modelOf(binding, model),
        noSandbox,
        env,
        settings: binding.settings,
      }),
  };
}

/** One start-up line per binding of the file: its patterns and what its agents are. */
export async function bindingLines(config: ServeConfig): Promise<string> {
  const lines: string[] = [];
  for (const binding of config.bindings.list()) {
    if (binding.match.length === 0) continue;
    const info = await config.infoFor(binding, binding.model);
    const sandbox = info.sandbox ? "on" : "off";
    lines.push(
      `binding ${binding.name} (${binding.match.join(", ")}): ${info.cwd} (engine ${info.engine}, model ${info.model}, sandbox ${sandbox})\n`,
    );
  }
  return lines.join("");
}
