import { contextWindowFor, maxOutputTokensFor } from "../agent/context-budget.js";
import type { AgentEvent, TurnOutcome } from "../agent/events.js";
import { randomUUID } from "../agent/random-uuid.js";
import type { ContentBlock } from "../model/types.js";

/**
 * Builders for the stream-json lines rudder prints, in Claude Code 2.1's field names
 * (measured on 2.1.328). Every line carries `session_id` and a fresh `uuid`, as there.
 */

export type OutputLine = Record<string, unknown> & { type: string };

export interface SessionInfo {
  sessionId: string;
  cwd: string;
  model: string;
  tools: readonly string[];
  /** MCP servers and whether each started (`connected` / `failed`), as Claude Code lists them. */
  mcpServers?: readonly { name: string; status: string }[];
  permissionMode: string;
  version: string;
  apiKeySource: string;
  /** The CLAUDE.md / AGENTS.md files in the system prompt (Claude Code's init has no such list). */
  instructionFiles?: readonly string[];
  /** rudder's extra `system/init` field: whether bash commands run in the sandbox, and why not. */
  sandbox?: { enabled: boolean; status: string; reason?: string; network?: string };
}

export function initLine(info: SessionInfo): OutputLine {
  return {
    type: "system",
    subtype: "init",
    cwd: info.cwd,
    session_id: info.sessionId,
    tools: [...info.tools],
    mcp_servers: (info.mcpServers ?? []).map(({ name, status }) => ({ name, status })),
    model: info.model,
    permissionMode: info.permissionMode,
    slash_commands: [],
    apiKeySource: info.apiKeySource,
    output_style: "default",
    agents: [],
    skills: [],
    plugins: [],
    rudder_version: info.version,
    project_instruction_files: [...(info.instructionFiles ?? [])],
    ...(info.sandbox === undefined ? {} : { sandbox: info.sandbox }),
    uuid: randomUUID(),
  };
}

export function lifecycleLine(sessionId: string, commandUuid: string, state: string): OutputLine {
  return {
    type: "command_lifecycle",
    command_uuid: commandUuid,
    state,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

/** One `assistant` line per content block, all with the API's message id. */
export function assistantLines(
  sessionId: string,
  model: string,
  event: Extract<AgentEvent, { type: "model_end" }>,
  userMessageUuids: readonly string[],
): OutputLine[] {
  const content =
    typeof event.message.content === "string"
      ? [{ type: "text", text: event.message.content } satisfies ContentBlock]
      : event.message.content;
  return content.map((block) => ({
    type: "assistant",
    message: {
      id: event.messageId,
      type: "message",
      role: "assistant",
      model,
      content: [block],
      stop_reason: null,
      stop_sequence: null,
      usage: event.usage,
    },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
    ...(userMessageUuids.length === 0 ? {} : { user_message_uuids: [...userMessageUuids] }),
  }));
}

function userLine(sessionId: string, content: unknown[]): OutputLine {
  return {
    type: "user",
    message: { role: "user", content },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
  };
}

/**
 * A tool's result as Claude Code prints it: the block the model got (images as `image`
 * blocks) and, in `tool_use_result`, the tool's own report in Claude Code's per-tool shape.
 */
export function toolResultLine(
  sessionId: string,
  event: Extract<AgentEvent, { type: "tool_end" }>,
): OutputLine {
  return {
    ...userLine(sessionId, [
      {
        tool_use_id: event.toolUseId,
        type: "tool_result",
        content: event.blocks ?? event.content,
        is_error: event.isError,
      },
    ]),
    ...(event.response === undefined ? {} : { tool_use_result: event.response }),
  };
}

/** The interrupt marker the kernel put into the conversation, as Claude Code prints it. */
export function interruptedLine(
  sessionId: string,
  event: Extract<AgentEvent, { type: "interrupted" }>,
): OutputLine {
  return userLine(sessionId, [{ type: "text", text: event.marker }]);
}

export function taskStartedLine(
  sessionId: string,
  event: Extract<AgentEvent, { type: "task_start" }>,
): OutputLine {
  return {
    type: "system",
    subtype: "task_started",
    task_id: event.taskId,
    tool_use_id: event.toolUseId,
    description: event.command,
    command: event.command,
    task_type: "local_bash",
    is_backgrounded: true,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

export function taskNotificationLine(
  sessionId: string,
  event: Extract<AgentEvent, { type: "task_end" }>,
  toolUseId: string | undefined,
): OutputLine {
  const exit = event.exitCode === null ? "no exit code" : `exit code ${event.exitCode}`;
  return {
    type: "system",
    subtype: "task_notification",
    task_id: event.taskId,
    ...(toolUseId === undefined ? {} : { tool_use_id: toolUseId }),
    status: event.status,
    command: event.command,
    exit_code: event.exitCode,
    summary: `Background command "${event.command}" ${event.status} (${exit})`,
    output: event.summary,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

export function apiRetryLine(
  sessionId: string,
  event: Extract<AgentEvent, { type: "model_retry" }>,
): OutputLine {
  return {
    type: "system",
    subtype: "api_retry",
    attempt: event.attempt,
    retry_delay_ms: event.delayMs,
    error_status: event.status ?? null,
    error: event.message,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

/** Claude Code's `modelUsage` entry, its window and largest reply included (2.1.328's names). */
function modelUsage(model: string, outcome: TurnOutcome): Record<string, unknown> {
  const { usage } = outcome;
  return {
    [model]: {
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      cacheReadInputTokens: usage.cache_read_input_tokens,
      cacheCreationInputTokens: usage.cache_creation_input_tokens,
      webSearchRequests: 0,
      costUSD: outcome.totalCostUsd,
      contextWindow: outcome.contextWindow ?? contextWindowFor(model),
      maxOutputTokens: maxOutputTokensFor(model),
    },
  };
}

export interface PermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: Record<string, unknown>;
}

/** The loop's subtypes for a model call that failed (see `ModelErrorSubtype`). */
const MODEL_FAILURES = new Set([
  "rate_limit",
  "overloaded",
  "api_error",
  "authentication_failed",
  "invalid_request",
  "network_error",
]);

/**
 * The result's `subtype` and `terminal_reason` as Claude Code 2.1 reports them, because hosts
 * branch on them (the Agent SDK types `subtype` as a closed union): an interrupted turn is
 * `error_during_execution`; a failed API call is `success` with `is_error`, terminal reason
 * `api_error` and the HTTP status in `api_error_status` (Claude Code's naming, odd as it reads;
 * recorded in test/protocol). What kind of failure it was stays in `result` and `errors`.
 */
function claudeEnding(outcome: TurnOutcome): { subtype: string; terminalReason: string } {
  if (outcome.subtype === "aborted") {
    return { subtype: "error_during_execution", terminalReason: outcome.terminalReason };
  }
  if (MODEL_FAILURES.has(outcome.subtype))
    return { subtype: "success", terminalReason: "api_error" };
  return { subtype: outcome.subtype, terminalReason: outcome.terminalReason };
}

export function resultLine(
  sessionId: string,
  model: string,
  outcome: TurnOutcome,
  details: {
    userMessageUuids: readonly string[];
    permissionDenials: readonly PermissionDenial[];
    /** The process's running total, which Claude Code reports (default this turn's cost). */
    totalCostUsd?: number;
  },
): OutputLine {
  const ending = claudeEnding(outcome);
  return {
    type: "result",
    subtype: ending.subtype,
    is_error: outcome.isError,
    result: outcome.result,
    session_id: sessionId,
    num_turns: outcome.numTurns,
    duration_ms: outcome.durationMs,
    duration_api_ms: outcome.durationMs,
    stop_reason: outcome.isError || outcome.localCommand !== undefined ? null : "end_turn",
    usage: outcome.usage,
    modelUsage: modelUsage(model, outcome),
    total_cost_usd: details.totalCostUsd ?? outcome.totalCostUsd,
    terminal_reason: ending.terminalReason,
    api_error_status: outcome.apiErrorStatus ?? null,
    permission_denials: [...details.permissionDenials],
    ...(outcome.isError ? { errors: [outcome.result] } : {}),
    ...(outcome.localCommand === undefined ? {} : { local_command: outcome.localCommand }),
    // rudder's own: the tokens the conversation takes now, for a context gauge.
    ...(outcome.contextTokens === undefined ? {} : { context_tokens: outcome.contextTokens }),
    ...(details.userMessageUuids.length === 0
      ? {}
      : {
          user_message_uuid: details.userMessageUuids[0],
          user_message_uuids: [...details.userMessageUuids],
        }),
    uuid: randomUUID(),
  };
}

/** The result printed when the process cannot start its session (unknown resume id). */
export function startupErrorResult(sessionId: string, message: string): OutputLine {
  return {
    type: "result",
    subtype: "error_during_execution",
    is_error: true,
    result: message,
    session_id: sessionId,
    num_turns: 0,
    duration_ms: 0,
    duration_api_ms: 0,
    stop_reason: null,
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
    modelUsage: {},
    total_cost_usd: 0,
    terminal_reason: "startup_error",
    api_error_status: null,
    permission_denials: [],
    errors: [message],
    uuid: randomUUID(),
  };
}

export function controlSuccess(requestId: string, response: Record<string, unknown>): OutputLine {
  return {
    type: "control_response",
    response: { subtype: "success", request_id: requestId, response },
  };
}

export function controlError(requestId: string, error: string, errorCode?: string): OutputLine {
  return {
    type: "control_response",
    response: {
      subtype: "error",
      request_id: requestId,
      error,
      ...(errorCode === undefined ? {} : { error_code: errorCode }),
    },
  };
}

/**
 * `--include-hook-events`: a hook that failed (timed out, crashed, could not start, printed
 * bad output), in the shape of Claude Code's `hook_response`; `message` says which hook and how.
 */
export function hookResponseLine(sessionId: string, event: string, message: string): OutputLine {
  return {
    type: "system",
    subtype: "hook_response",
    hook_id: randomUUID(),
    hook_name: event,
    hook_event: event,
    output: message,
    stdout: "",
    stderr: message,
    outcome: "error",
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

/** Reported for an input line that could not be used; the line is skipped. */
export function inputErrorLine(sessionId: string, error: string, line: string): OutputLine {
  return {
    type: "system",
    subtype: "input_error",
    error,
    line: line.length > 200 ? `${line.slice(0, 200)}...` : line,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

/** `--include-partial-messages`: the raw stream events of one model call. */
export function streamEventLine(
  sessionId: string,
  event: Record<string, unknown>,
  messageId: string | undefined,
): OutputLine {
  return {
    type: "stream_event",
    event,
    session_id: sessionId,
    parent_tool_use_id: null,
    uuid: randomUUID(),
    ...(messageId === undefined ? {} : { api_message_id: messageId }),
  };
}
