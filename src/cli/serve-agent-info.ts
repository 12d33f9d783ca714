/**
 * What `rudder serve`'s agents are, worked out as they will work it out: the folder they work
 * in, the engine, the model (a rudder agent's from `--model`, the environment and the folder's
 * settings; Claude Code's own `default` unless `--model` names one) and whether rudder's sandbox
 * confines their commands (bubblewrap found, not turned off by `--no-sandbox` or the settings;
 * never for the claude engine, which rudder does not confine). For the start-up line, `GET
 * /api/info` and the page's header.
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
}

export async function serveAgentInfo(options: ServeAgentOptions): Promise<AgentInfo> {
  const { cwd, env } = options;
  if (options.engine === "claude") {
    return { cwd, engine: "claude", model: options.model ?? "default", sandbox: false };
  }
  // A settings file the agents would refuse is theirs to report; here it counts as absent.
  const loaded = await loadSettings({ cwd, home: env.HOME ?? homedir() });
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

/** The start-up line: `agents work in <cwd> (engine rudder, model <model>, sandbox on)`. */
export function agentInfoLine(info: AgentInfo): string {
  return `agents work in ${info.cwd} (engine ${info.engine}, model ${info.model}, sandbox ${info.sandbox ? "on" : "off"})`;
}
