export const HOOK_EVENTS = ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"] as const;

export type HookEventName = (typeof HOOK_EVENTS)[number];

/** The JSON a hook receives, field for field as Claude Code sends it. */
export interface HookInput {
  session_id: string;
  cwd: string;
  hook_event_name: HookEventName;
  transcript_path?: string;
  prompt?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  tool_response?: unknown;
  tool_use_id?: string;
  stop_hook_active?: boolean;
}

/** The merged verdict of every hook that ran for one event. */
export interface HookOutcome {
  /** True when a hook blocked (exit 2, `decision: "block"`, or `permissionDecision: "deny"`). */
  blocked: boolean;
  /** Why it blocked; shown to the model. */
  reason?: string;
  /** PreToolUse only: a hook's explicit permission decision. */
  permissionDecision?: "allow" | "ask" | "deny";
  /** PreToolUse only: replacement tool input. */
  updatedInput?: Record<string, unknown>;
  /** Text hooks want added to the model's context. */
  additionalContext: string[];
  /** Problems running hooks (timeouts, bad JSON, crashes), for the user to see. */
  warnings: string[];
}

/**
 * Runs every hook registered for an event (in-process callbacks and command
 * hooks) and merges their verdicts. Never rejects: hook failures become
 * `warnings`. `input.tool_name` is rudder's tool name (`bash`); matchers and
 * command hooks see Claude Code's name (`Bash`) as well, so existing
 * settings work unchanged.
 */
export interface HookRunner {
  run(input: HookInput, signal: AbortSignal): Promise<HookOutcome>;
}
