import type { Session } from "../agent/session.js";
import type { Confirm } from "../agent/tool-dispatch.js";
import type { Message } from "../model/types.js";
import type { HostControls } from "./host-controls.js";
import type { OutputLine, SessionInfo } from "./output-lines.js";
import type { PermissionMode } from "./permission-mode.js";
import type { AddHookCallback } from "./sdk-hooks.js";
import type { PrepareSession } from "./session-preparation.js";

/** What a host may change before the session's first turn (the `initialize` request). */
export interface SessionOverrides {
  confirm: Confirm;
  systemPrompt?: string;
  appendSystemPrompt?: string;
}

export interface StreamJsonFrontEndOptions {
  info: Omit<SessionInfo, "permissionMode">;
  write: (line: OutputLine) => void;
  /** Builds the session when the first message (or control request needing it) arrives. */
  createSession: (overrides: SessionOverrides) => Session;
  permissionMode: PermissionMode;
  /** `--permission-prompt-tool stdio`: `ask` decisions go to the host as `can_use_tool`. */
  permissionPrompt?: boolean;
  /** `--include-partial-messages`: `stream_event` lines for text as it streams. */
  includePartialMessages?: boolean;
  /**
   * `--include-hook-events`: a `system` `hook_response` line (Claude Code's shape, outcome
   * `error`) for each hook that failed: timed out, crashed, could not start, bad output.
   */
  includeHookEvents?: boolean;
  /**
   * `--ask-before-waking`: a wake-up for background tasks that finished after the turn waits
   * for the host's yes (a `wake` control request, see `WakeGate`).
   */
  askBeforeWaking?: boolean;
  /** Called with the history just before each model call, so it is stored before it is sent. */
  persist?: (history: readonly Message[]) => void;
  /** Notes for people (stderr). */
  warn?: (message: string) => void;
  /**
   * Gets the session ready before its first turn (starts the MCP servers), adding the
   * `mcpServers` an `initialize` request sent. Called once: at `initialize`, or at the
   * first message when none came before it; messages wait until it resolves.
   */
  prepare?: PrepareSession;
  /**
   * `--await-initialize`: messages wait for the host's `initialize` (which may bring MCP
   * servers) rather than getting the session ready without it.
   */
  awaitInitialize?: boolean;
  /** Registers a host's hook callback (from `initialize`) with the session's hooks. */
  addHookCallback?: AddHookCallback;
  /** `set_model`, the models `initialize` lists, `mcp_status`; without it the model is fixed. */
  controls?: HostControls;
}
