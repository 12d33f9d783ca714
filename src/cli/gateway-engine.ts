/**
 * How `rudder serve` runs its agents: rudder itself (this package's executable) or the Claude
 * Code CLI, in a folder, with a model; and where each engine keeps a session's transcript
 * (mirrored in a shared store).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sessionsDirectory } from "../agent/transcript-store.js";
import { claudeSessionFile } from "../claude-cli/session-file.js";
import type { GatewayEngine } from "../gateway/index.js";
import type { DataFolderWrapper } from "./data-folder-wrapper.js";

/** The `rudder` executable of this package, which the gateway runs as its agents. */
export function rudderExecutable(): string {
  return fileURLToPath(new URL("../cli.js", import.meta.url));
}

export interface EngineChoice {
  cwd: string;
  model: string | undefined;
  noSandbox: boolean;
  env: NodeJS.ProcessEnv;
  /** How Claude Code agents are kept from the gateway's data folder (data-folder-wrapper.ts). */
  wrapper?: DataFolderWrapper | undefined;
}

/** The engine `engineName` in `cwd` with `model` (undefined: the engine's own). */
export function gatewayEngine(
  engineName: "rudder" | "claude",
  options: EngineChoice,
): GatewayEngine {
  const { cwd, model, env } = options;
  // Partial messages let the page stream text as it is written, not block by block; hook
  // events tell the channel of a hook that timed out or failed.
  const engineArgs = ["--include-partial-messages", "--include-hook-events"];
  if (engineName === "claude") {
    const claude = env.RUDDER_CLAUDE_BIN ?? "claude";
    const wrapper = options.wrapper;
    return {
      ...(wrapper?.kind === "wrapped"
        ? { claudeBin: wrapper.bin, binArgs: [...wrapper.args, claude], owned: wrapper.owned }
        : { claudeBin: claude }),
      args: engineArgs,
      cwd,
      sessionFile: (sessionId) => claudeSessionFile(env, cwd, sessionId),
      ...(model ? { model } : {}),
    };
  }
  const sessions = sessionsDirectory(env);
  return {
    claudeBin: rudderExecutable(),
    args: [...engineArgs, ...(options.noSandbox ? ["--no-sandbox"] : [])],
    cwd,
    sessionFile: (sessionId) => join(sessions, `${sessionId}.jsonl`),
    ...(model ? { model } : {}),
  };
}
