/**
 * What `rudder serve`'s agents are, worked out as they will work it out: the folder they work
 * in, the engine, the model (a rudder agent's from `--model`, the environment and the folder's
 * settings; Claude Code's own `default` unless `--model` names one) and whether rudder's sandbox
 * confines their commands (bubblewrap found, not turned off by `--no-sandbox` or the settings;
 * for the claude engine, whether Claude Code's own sandbox is turned on). A binding's `settings`
 * count as its agents get them (`--settings`, over the folder's own files): its `model`, `env`
 * and `sandbox`. For the start-up lines, `GET /api/info`, `GET /api/bindings`, `/status` and the
 * page's header.
 */
import { homedir } from "node:os";
import { loadSettings } from "../agent/settings.js";
import type { AgentInfo } from "../gateway/index.js";
import { setupModelName } from "./setup/setup-model.js";
import { setupSandbox } from "./setup/setup-sandbox.js";

export interface ServeAgentOptions {
  engine: "rudder" | "claude";
  cwd: string;
  /** `--model`, or `demo` when the gateway runs the demo model. */
  model: string | undefined;
  noSandbox: boolean;
  env: NodeJS.ProcessEnv;
  /** The binding's Claude Code settings, given to its agents as `--settings`. */
  settings?: Record<string, unknown> | undefined;
}

/** Claude Code confines its own commands when its settings turn its sandbox on. */
function claudeSandbox(settings: Record<string, unknown> | undefined): boolean {
  const sandbox = settings?.sandbox;
  return typeof sandbox === "object" && sandbox !== null && "enabled" in sandbox
    ? sandbox.enabled === true
    : false;
}

export async function serveAgentInfo(options: ServeAgentOptions): Promise<AgentInfo> {
  const { cwd, env } = options;
  if (options.engine === "claude") {
    const model = options.model ?? stringSetting(options.settings?.model) ?? "default";
    return { cwd, engine: "claude", model, sandbox: claudeSandbox(options.settings) };
  }
  // A settings file the agents would refuse is theirs to report; here it counts as absent.
  const loaded = await loadSettings({
    cwd,
    home: env.HOME ?? homedir(),
    ...(options.settings === undefined ? {} : { settingsFile: JSON.stringify(options.settings) }),
  });
  const settingsEnv = { ...loaded.settings.env, ...env };
  const model = setupModelName(options.model, loaded.settings, settingsEnv);
  const sandbox = setupSandbox({
    settings: loaded.settings,
    workspace: cwd,
    env,
    settingsEnv,
    noSandbox: options.noSandbox,
    warnings: [],
  });
  const confined = !("error" in sandbox) && sandbox.status().state === "on";
  if (!("error" in sandbox)) sandbox.close();
  return { cwd, engine: "rudder", model, sandbox: confined };
}

function stringSetting(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The start-up line: `agents work in <cwd> (engine rudder, model <model>, sandbox on)`. */
export function agentInfoLine(info: AgentInfo): string {
  return `agents work in ${info.cwd} (engine ${info.engine}, model ${info.model}, sandbox ${info.sandbox ? "on" : "off"})`;
}
