import type { PermissionHandler } from "./permission-request.js";

export interface CommandOptions {
  model?: string | undefined;
  claudeBin?: string | undefined;
  /**
   * Arguments placed right after the binary, before the stream-json flags: a script and
   * subcommand for an engine that is not a bare binary, e.g.
   * `{ claudeBin: process.execPath, binArgs: ["dist/cli.js", "run"] }` for rudder.
   */
  binArgs?: readonly string[] | undefined;
  permissionMode?: string | undefined;
  allowedTools?: readonly string[] | undefined;
  onPermissionRequest?: PermissionHandler | undefined;
  extraArgs?: readonly string[] | undefined;
  env?: Record<string, string | undefined> | undefined;
  /**
   * The environment the child's is made from; default `process.env`, read at each start. A
   * host starting many agents passes a copy taken once: each read of `process.env` as a whole
   * costs a lookup per variable (about 3 s of processor per 1,200 starts on a loaded machine).
   */
  baseEnv?: Readonly<Record<string, string | undefined>> | undefined;
  maxRetries?: number | undefined;
}

/** The binary: the option, else `RUDDER_CLAUDE_BIN`, else `claude` on the PATH. */
export function resolveClaudeBin(options: CommandOptions): string {
  return options.claudeBin ?? process.env.RUDDER_CLAUDE_BIN ?? "claude";
}

/**
 * The argv of a persistent stream-json CLI. `--verbose` is required by the CLI for stream-json
 * output; `--resume` continues the session once one is known.
 */
export function buildClaudeCommand(options: CommandOptions, sessionId: string | null): string[] {
  const command = [
    resolveClaudeBin(options),
    ...(options.binArgs ?? []),
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
  ];
  if (options.model) command.push("--model", options.model);
  if (sessionId) command.push("--resume", sessionId);
  if (options.permissionMode) command.push("--permission-mode", options.permissionMode);
  if (options.allowedTools && options.allowedTools.length > 0) {
    command.push("--allowedTools", options.allowedTools.join(","));
  }
  if (options.onPermissionRequest) command.push("--permission-prompt-tool", "stdio");
  command.push(...(options.extraArgs ?? []));
  return command;
}

/**
 * The child's environment: the host's (`baseEnv`, default `process.env`), overlaid with `env` (an `undefined` value removes a
 * variable). `CLAUDECODE` is removed so a CLI started from inside Claude Code does not refuse
 * to run nested; `CLAUDE_CODE_MAX_RETRIES` comes from `maxRetries` (the CLI's default of 10
 * retries takes minutes before a rate limit surfaces).
 */
export function buildChildEnvironment(options: CommandOptions): Record<string, string> {
  const merged: Record<string, string | undefined> = {
    ...(options.baseEnv ?? process.env),
    ...options.env,
  };
  delete merged.CLAUDECODE;
  if (options.maxRetries !== undefined) merged.CLAUDE_CODE_MAX_RETRIES = String(options.maxRetries);
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(merged)) {
    if (value !== undefined) environment[key] = value;
  }
  return environment;
}
