/**
 * What a tool call is dispatched with: the tools, the rules and workspace the gate judges by,
 * the hooks, the background manager, the event sink and the signal; and how a person is asked
 * (`Confirm`). Its own module so the phases of a dispatch share it without importing each other.
 */
import type { BackgroundManager } from "../background/background-manager.js";
import type { HookRunner } from "../hooks/types.js";
import type { PermissionRules } from "../permissions/types.js";
import type { AnyTool } from "../tools/types.js";
import type { AgentEventSink } from "./events.js";

export interface ConfirmRequest {
  toolName: string;
  input: Record<string, unknown>;
  reason: string;
  /** A protected path or secret location: a permission mode must not answer it for a person. */
  guarded?: boolean;
}

/**
 * A person's (or host's) answer to an `ask`: a plain yes/no, or with a
 * message for the model on denial and a replacement input on approval.
 */
export type ConfirmAnswer =
  | boolean
  | { allowed: boolean; message?: string; updatedInput?: Record<string, unknown> };

/** Asks a person whether an `ask` decision may proceed. Absent: nobody to ask, so deny. */
export type Confirm = (request: ConfirmRequest, signal: AbortSignal) => Promise<ConfirmAnswer>;

export interface DispatchContext {
  tools: readonly AnyTool[];
  rules: PermissionRules;
  workspace: string;
  /** The user's home, for `~/` permission rules. */
  home?: string;
  /**
   * Whether bash commands run in the OS sandbox (the gate's posture; see
   * `EvaluateOptions.sandboxed`), or a function telling it per command (a
   * sandbox's excluded commands run unconfined). Undefined: the old default.
   */
  bashSandboxed?: boolean | ((command: string) => boolean);
  /**
   * A person can answer `confirm` and has not opted out (`sandbox.askBeforeDestroying`):
   * commands that destroy work ask in the sandbox too.
   */
  askBeforeDestroying?: boolean;
  sessionId: string;
  confirm?: Confirm;
  hooks?: HookRunner;
  background?: BackgroundManager;
  emit: AgentEventSink;
  signal: AbortSignal;
  /** Called when a hook answers `continue: false`: the turn ends after this tool. */
  onHalt?: (reason: string) => void;
}
