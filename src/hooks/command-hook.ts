import { claudeHookInput } from "./claude-hook-input.js";
import { interpretHookResult } from "./hook-output.js";
import { runHookProcess } from "./hook-process.js";
import { rudderToolInput } from "./tool-names.js";
import type { CommandHookConfig, HookInput, HookOutcome } from "./types.js";

export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;

export interface CommandHookOptions {
  /** The project directory: the hook's working directory and `CLAUDE_PROJECT_DIR`. */
  cwd: string;
  /** Base environment for the hook (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Used when the hook sets no `timeout` (default 60). */
  defaultTimeoutSeconds?: number;
  signal: AbortSignal;
}

/** How a hook is named in warnings: its command line. */
export function commandHookLabel(hook: CommandHookConfig): string {
  return hook.args !== undefined ? hook.args.join(" ") : (hook.command ?? "");
}

/**
 * Runs one command hook with Claude Code's protocol. A `command` string runs
 * as `bash -c <command>`; `args` (which wins when both are given) runs the
 * program directly. The hook input is
 * only ever written to stdin as JSON, never put on a command line. Returns
 * this hook's part of the outcome, with `updatedInput` in rudder's field
 * names. Never rejects: failures are warnings.
 */
export async function runCommandHook(
  hook: CommandHookConfig,
  input: HookInput,
  options: CommandHookOptions,
): Promise<Partial<HookOutcome>> {
  const label = commandHookLabel(hook);
  const argv = commandHookArgv(hook);
  if (argv === undefined) {
    return { warnings: [`hook "${label}" has neither a command nor args; skipped`] };
  }
  const timeoutSeconds =
    hook.timeout ?? options.defaultTimeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS;
  const stdinJson = claudeHookInput(input);
  const result = await runHookProcess({
    argv,
    stdin: `${JSON.stringify(stdinJson)}\n`,
    cwd: options.cwd,
    env: {
      ...(options.env ?? process.env),
      CLAUDE_PROJECT_DIR: options.cwd,
      RUDDER_PROJECT_DIR: options.cwd,
    },
    timeoutMs: timeoutSeconds * 1000,
    signal: options.signal,
  });
  const outcome = interpretHookResult(input.hook_event_name, label, timeoutSeconds, result);
  if (outcome.updatedInput !== undefined && input.tool_name !== undefined) {
    const sent = (stdinJson.tool_input ?? {}) as Record<string, unknown>;
    outcome.updatedInput = rudderToolInput(input.tool_name, outcome.updatedInput, sent);
  }
  return outcome;
}

function commandHookArgv(hook: CommandHookConfig): [string, ...string[]] | undefined {
  if (hook.args !== undefined) {
    const [program, ...rest] = hook.args;
    return program === undefined || program === "" ? undefined : [program, ...rest];
  }
  if (hook.command === undefined || hook.command.trim() === "") return undefined;
  return ["bash", "-c", hook.command];
}
