/**
 * The setup's sandbox: the policy from the settings and `--no-sandbox`, and what confines
 * commands by it. When it cannot confine here, a warning, or an error for the user when the
 * settings say to fail (`failIfUnavailable`).
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { RudderSettings } from "../../agent/settings.js";
import { Sandbox } from "../../sandbox/sandbox.js";
import { sandboxPolicy } from "../../sandbox/sandbox-policy.js";
import { unavailableLine } from "../../sandbox/sandbox-status.js";

export interface SetupSandboxOptions {
  settings: RudderSettings;
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** The settings' `env` under the process environment, for the confined commands. */
  settingsEnv: NodeJS.ProcessEnv;
  noSandbox: boolean;
  /** Where a warning goes. */
  warnings: string[];
}

export function setupSandbox(options: SetupSandboxOptions): Sandbox | { error: string } {
  const { env, workspace } = options;
  const home = env.HOME ?? homedir();
  const policy = sandboxPolicy(options.settings.sandbox ?? {}, {
    workspace,
    home,
    rudderHome: resolve(env.RUDDER_HOME ?? join(home, ".rudder")),
    ...(env.CLAUDE_CONFIG_DIR === undefined ? {} : { claudeConfigDir: env.CLAUDE_CONFIG_DIR }),
    env: options.settingsEnv,
    disabled: options.noSandbox,
  });
  const sandbox = new Sandbox(policy, {
    env: options.settingsEnv,
    onUnavailable: (line) => process.stderr.write(`rudder: ${line}\n`),
  });
  const status = sandbox.status();
  if (status.state === "unavailable") {
    if (policy.failIfUnavailable) return { error: unavailableLine(status.reason, true) };
    options.warnings.push(unavailableLine(status.reason, false));
  }
  return sandbox;
}
