import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { claudeCodeBinary } from "../helpers/claude-code-env.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { runProcess } from "../helpers/owned-process.js";
import type { Sandbox } from "./helpers.js";

/**
 * The two programs an Agent SDK host can drive, for scenarios run on both so that a
 * difference shows as a failing pair: rudder's built CLI and the real Claude Code 2.1.328
 * (installed into .cache/ by scripts/install-claude-code.sh), each against the fake API.
 */
export interface SdkEngine {
  name: "rudder" | "claude";
  /** The executable the SDK starts (`pathToClaudeCodeExecutable`). */
  executable(): string;
  /** The sandbox's environment plus what the engine needs to stay offline and quiet. */
  env(sandbox: Sandbox): NodeJS.ProcessEnv;
}

let claudePath: string | undefined;

export const SDK_ENGINES: SdkEngine[] = [
  { name: "rudder", executable: () => RUDDER_CLI, env: (sandbox) => sandbox.env },
  {
    name: "claude",
    executable: () => {
      claudePath ??= claudeCodeBinary();
      return claudePath;
    },
    env: (sandbox) => {
      const config = join(sandbox.home, ".claude");
      mkdirSync(config, { recursive: true });
      return {
        ...sandbox.env,
        CLAUDE_CONFIG_DIR: config,
        CLAUDE_CODE_TMPDIR: sandbox.env.TMPDIR,
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        CLAUDE_CODE_MAX_RETRIES: "0",
        IS_SANDBOX: "1",
        // MCP tools go to the model in the request's tool list, as rudder sends them.
        ENABLE_TOOL_SEARCH: "false",
      };
    },
  },
];

/** Runs the engine once with `args` (rudder as `rudder run`), collecting its output. */
export function runPrint(
  engine: SdkEngine,
  sandbox: Sandbox,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [command, ...prefix] =
    engine.name === "rudder" ? [process.execPath, RUDDER_CLI, "run"] : [engine.executable()];
  return runProcess(command as string, [...prefix, ...args], {
    cwd: sandbox.workspace,
    env: engine.env(sandbox),
  });
}
