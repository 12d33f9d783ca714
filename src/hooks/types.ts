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
  /** Why the hooks decided `permissionDecision` (for `ask`, text for the confirm prompt). */
  permissionDecisionReason?: string;
  /** PreToolUse only: replacement tool input. */
  updatedInput?: Record<string, unknown>;
  /** Text hooks want added to the model's context. */
  additionalContext: string[];
  /** Problems running hooks (timeouts, bad JSON, crashes), for the user to see. */
  warnings: string[];
  /**
   * Set when a hook answered `continue: false`: the loop should end the turn
   * now (whatever `blocked` says) and show `reason` (its `stopReason`) to the user.
   */
  halt?: { reason: string };
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

/**
 * One command hook as Claude Code configures it: `command` runs through
 * `bash -c`; `args` (a rudder extension) runs the program directly, with no
 * shell. Either way the hook input arrives only on stdin, as JSON.
 */
export interface CommandHookConfig {
  type: "command";
  command?: string;
  args?: string[];
  /** Seconds before the hook's process group is killed (default 60). */
  timeout?: number;
}

/** A matcher group: `matcher` is a tool-name pattern (PreToolUse, PostToolUse only). */
export interface HookMatcherGroup {
  matcher?: string;
  hooks: CommandHookConfig[];
}

/** The `hooks` block of a settings file, keyed by event. */
export type HooksConfig = Partial<Record<HookEventName, HookMatcherGroup[]>>;
