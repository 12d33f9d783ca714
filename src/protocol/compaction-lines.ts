import type { AgentEvent, CompactionTrigger } from "../agent/events.js";
import { randomUUID } from "../agent/random-uuid.js";
import type { OutputLine } from "./output-lines.js";

/**
 * The stream-json lines of `/compact`, auto compaction and `/clear`, in the shapes Claude Code
 * 2.1.328 prints them (recorded against the fake Messages API, see
 * test/protocol/compaction-claude.test.ts): `status` compacting and its end, the
 * `compact_boundary` with `compact_metadata`, the summary as a synthetic user message, the
 * local command's output, and `conversation_reset` for `/clear`.
 */

/** Claude Code counts the summary's characters as it streams for an automatic compaction only. */
export function compactingLine(sessionId: string, trigger: CompactionTrigger): OutputLine {
  return {
    type: "system",
    subtype: "status",
    status: "compacting",
    ...(trigger === "auto" ? { compact_output_chars: 0 } : {}),
    session_id: sessionId,
    uuid: randomUUID(),
  };
}

export function compactResultLine(sessionId: string, error: string | undefined): OutputLine {
  return {
    type: "system",
    subtype: "status",
    status: null,
    compact_result: error === undefined ? "success" : "failed",
    ...(error === undefined ? {} : { compact_error: error }),
    session_id: sessionId,
    uuid: randomUUID(),
  };
}

export function compactBoundaryLine(
  sessionId: string,
  event: Extract<AgentEvent, { type: "compaction_end" }>,
  cumulativeDroppedTokens: number,
  logicalParentUuid: string | null,
): OutputLine {
  return {
    type: "system",
    subtype: "compact_boundary",
    session_id: sessionId,
    uuid: randomUUID(),
    compact_metadata: {
      trigger: event.trigger,
      pre_tokens: event.preTokens,
      post_tokens: event.postTokens,
      cumulative_dropped_tokens: cumulativeDroppedTokens,
      duration_ms: event.durationMs ?? 0,
    },
    logical_parent_uuid: logicalParentUuid,
  };
}

/** The summary that now heads the conversation, as Claude Code shows it: a synthetic user line. */
export function compactSummaryLine(sessionId: string, summary: string): OutputLine {
  return {
    type: "user",
    message: { role: "user", content: summary },
    session_id: sessionId,
    parent_tool_use_id: null,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
    isReplay: false,
    isSynthetic: true,
  };
}

export function localCommandOutputLine(sessionId: string, output: string): OutputLine {
  return {
    type: "user",
    message: { role: "user", content: `<local-command-stdout>${output}</local-command-stdout>` },
    session_id: sessionId,
    parent_tool_use_id: null,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
    isReplay: true,
  };
}

/**
 * `/clear`, with the old conversation's id in `session_id`. As in Claude Code,
 * `new_conversation_id` is this line's own uuid; the new session id is announced by the
 * `system/init` that follows (and every later line).
 */
export function conversationResetLine(
  event: Extract<AgentEvent, { type: "session_cleared" }>,
  userMessageUuid: string | undefined,
): OutputLine {
  const uuid = randomUUID();
  return {
    type: "conversation_reset",
    new_conversation_id: uuid,
    uuid,
    trigger: "clear",
    user_message_uuid: userMessageUuid ?? randomUUID(),
    timestamp: new Date().toISOString(),
    session_id: event.previousSessionId,
  };
}

export function backgroundTasksChangedLine(sessionId: string): OutputLine {
  return {
    type: "system",
    subtype: "background_tasks_changed",
    tasks: [],
    uuid: randomUUID(),
    session_id: sessionId,
  };
}
