import { claudeHookInput } from "./claude-hook-input.js";
import { interpretHookJson } from "./hook-output.js";
import type { HookCallback } from "./hook-registry.js";
import { rudderToolInput } from "./tool-names.js";
import type { HookOutcome } from "./types.js";

/**
 * Asks someone else to run a hook: gets the hook input as Claude Code sends
 * it, resolves with the hook's JSON answer (a command hook's stdout, parsed).
 * Rejects when no answer can come; should stop waiting when `signal` aborts.
 */
export type JsonHookCall = (
  input: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

export interface JsonHookCallbackOptions {
  /**
   * A call that fails (rejects, or answers JSON of the wrong shape) blocks what the event
   * guards, instead of being only a warning (the Agent SDK's `onFailure: "block"`). Not for
   * Stop, where a block would mean "go on".
   */
  blockOnFailure?: boolean;
}

/**
 * An in-process hook that speaks Claude Code's JSON hook protocol through
 * `call` (an Agent SDK host's hook callback, say): the input goes out in
 * Claude Code's names, and the answer is read exactly as a command hook's
 * stdout JSON, so blocking, permission decisions, `updatedInput` (mapped back
 * to rudder's names), `additionalContext` and `continue: false` mean the same.
 * `name` labels its warnings (`hook callback "hook_0"`).
 */
export function jsonHookCallback(
  name: string,
  call: JsonHookCall,
  options: JsonHookCallbackOptions = {},
): HookCallback {
  return async (input, signal) => {
    const failed = (problem: string): Partial<HookOutcome> =>
      options.blockOnFailure === true && input.hook_event_name !== "Stop"
        ? { blocked: true, reason: problem, warnings: [problem] }
        : { warnings: [problem] };
    const sent = claudeHookInput(input);
    let answer: Record<string, unknown>;
    try {
      answer = await call(sent, signal);
    } catch (error) {
      return failed(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    const read = interpretHookJson(input.hook_event_name, name, answer);
    if (!read.ok) return failed(`${name} answered JSON of the wrong shape (${read.problem})`);
    const { outcome } = read;
    if (outcome.updatedInput !== undefined && input.tool_name !== undefined) {
      const original = (sent.tool_input ?? {}) as Record<string, unknown>;
      outcome.updatedInput = rudderToolInput(input.tool_name, outcome.updatedInput, original);
    }
    return outcome;
  };
}
