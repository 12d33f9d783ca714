import type { TaskStatus } from "../background/task.js";
import type { Message, ToolResultBlock, Usage } from "../model/types.js";
import type { CompactionBoundary, CompactionTrigger } from "./compaction-boundary.js";

/** How a turn ended. `subtype` names the failure when `isError` is true. */
export interface TurnOutcome {
  result: string;
  isError: boolean;
  /** `success`, or a failure such as `rate_limit`, `api_error`, `aborted`, `error_max_turns`. */
  subtype: string;
  numTurns: number;
  durationMs: number;
  usage: Usage;
  totalCostUsd: number;
  /**
   * Why the loop stopped: `completed`, `aborted_streaming` / `aborted_tools` (interrupted while
   * the model answered / while tools ran), `model_error`, `max_turns`, `hook_stopped`.
   */
  terminalReason: string;
  /** HTTP status of the failing model call, when there was one. */
  apiErrorStatus?: number;
  /** Epoch ms at which a rate limit resets, when known. */
  resetAt?: number;
  /** Tokens the conversation takes after the turn, of `contextWindow` (how full it is). */
  contextTokens?: number;
  contextWindow?: number;
  /** Set when the turn was a command rather than model work: `/compact` or `/clear`. */
  localCommand?: "compact" | "clear";
}

export type { CompactionTrigger, TaskStatus };

/**
 * The one event stream of the agent. Every front end (terminal, stream-json,
 * SSE, the web page) consumes this union and nothing else.
 */
export type AgentEvent =
  | { type: "turn_start"; prompt: string }
  | { type: "model_start"; call: number }
  | { type: "text_delta"; text: string }
  | { type: "model_retry"; attempt: number; delayMs: number; status?: number; message: string }
  | { type: "model_end"; message: Message; messageId: string; usage: Usage }
  | { type: "tool_start"; toolUseId: string; name: string; input: Record<string, unknown> }
  | {
      type: "tool_end";
      toolUseId: string;
      name: string;
      content: string;
      isError: boolean;
      /** The result as Claude Code reports it to hosts, per tool (`tool_use_result`). */
      response?: unknown;
      /** The content blocks the model was sent, when the result holds images. */
      blocks?: ToolResultBlock["content"];
    }
  | { type: "permission_denied"; toolUseId: string; name: string; reason: string }
  | { type: "task_start"; taskId: string; command: string; toolUseId: string }
  | {
      type: "task_end";
      taskId: string;
      command: string;
      status: TaskStatus;
      exitCode: number | null;
      summary: string;
    }
  | { type: "inbox_delivered"; texts: string[]; taskIds: string[] }
  | { type: "hook_warning"; event: string; message: string }
  /** The turn was interrupted; `marker` is the user text that records it in the history. */
  | { type: "interrupted"; marker: string }
  | { type: "compaction_start"; trigger: CompactionTrigger; preTokens: number }
  /**
   * A compaction ended: on success with the summary message that now heads the history and
   * the boundary the transcript records; on failure with `error` (the history is unchanged).
   */
  | {
      type: "compaction_end";
      trigger: CompactionTrigger;
      preTokens: number;
      postTokens: number;
      durationMs?: number;
      summary?: string;
      boundary?: CompactionBoundary;
      error?: string;
    }
  /** `/clear`: the conversation starts over under a new id (the old transcript stays). */
  | { type: "session_cleared"; previousSessionId: string; sessionId: string }
  | { type: "turn_end"; outcome: TurnOutcome };

export type AgentEventSink = (event: AgentEvent) => void;
