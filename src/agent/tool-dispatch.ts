import type { BackgroundManager } from "../background/background-manager.js";
import { shouldRunBackground } from "../background/background-manager.js";
import type { HookRunner } from "../hooks/types.js";
import type { ToolResultBlock, ToolUseBlock } from "../model/types.js";
import { evaluatePermission } from "../permissions/evaluate.js";
import type { PermissionRules, PermissionVerdict } from "../permissions/types.js";
import type { AnyTool, ToolResult } from "../tools/types.js";
import type { AgentEventSink } from "./events.js";

export interface ConfirmRequest {
  toolName: string;
  input: Record<string, unknown>;
  reason: string;
}

/** Asks a person whether an `ask` decision may proceed. Absent: nobody to ask, so deny. */
export type Confirm = (request: ConfirmRequest, signal: AbortSignal) => Promise<boolean>;

export interface DispatchContext {
  tools: readonly AnyTool[];
  rules: PermissionRules;
  workspace: string;
  /** The user's home, for `~/` permission rules. */
  home?: string;
  sessionId: string;
  confirm?: Confirm;
  hooks?: HookRunner;
  background?: BackgroundManager;
  emit: AgentEventSink;
  signal: AbortSignal;
  /** Called when a hook answers `continue: false`: the turn ends after this tool. */
  onHalt?: (reason: string) => void;
}

function resultBlock(toolUseId: string, result: ToolResult): ToolResultBlock {
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    content: result.content,
    ...(result.isError ? { is_error: true } : {}),
  };
}

function validationError(tool: AnyTool, issues: string): ToolResult {
  return {
    content: `Error: invalid input for ${tool.name}: ${issues}. Expected input schema: ${JSON.stringify(tool.jsonSchema)}`,
    isError: true,
  };
}

/** Combines the gate's verdict with a PreToolUse hook's explicit decision. */
async function decide(
  verdict: PermissionVerdict,
  hookDecision: "allow" | "ask" | "deny" | undefined,
  request: ConfirmRequest,
  context: DispatchContext,
): Promise<{ allowed: boolean; reason: string }> {
  // The built-in deny list is never overridden: it guards the machine, not the project.
  if (verdict.decision === "deny") return { allowed: false, reason: verdict.reason };
  if (hookDecision === "deny") return { allowed: false, reason: "a PreToolUse hook denied it" };
  const decision = hookDecision ?? verdict.decision;
  if (decision === "allow") return { allowed: true, reason: verdict.reason };
  if (context.confirm === undefined) {
    return {
      allowed: false,
      reason: `${verdict.reason} (needs confirmation, and nobody can be asked)`,
    };
  }
  const allowed = await context.confirm(request, context.signal).catch(() => false);
  return { allowed, reason: allowed ? "confirmed" : `${verdict.reason} (not confirmed)` };
}

/**
 * Runs one tool call through validation, PreToolUse hooks, the permission
 * gate, the tool itself (or the background manager) and PostToolUse hooks.
 * Never rejects: every failure is a tool result the model can read.
 */
export async function dispatchToolUse(
  block: ToolUseBlock,
  context: DispatchContext,
): Promise<ToolResultBlock> {
  const { emit } = context;
  emit({ type: "tool_start", toolUseId: block.id, name: block.name, input: block.input });
  const finish = (result: ToolResult): ToolResultBlock => {
    emit({
      type: "tool_end",
      toolUseId: block.id,
      name: block.name,
      content: result.content,
      isError: result.isError,
    });
    return resultBlock(block.id, result);
  };

  const tool = context.tools.find((candidate) => candidate.name === block.name);
  if (tool === undefined) {
    const names = context.tools.map((candidate) => candidate.name).join(", ");
    return finish({
      content: `Error: unknown tool "${block.name}". Tools: ${names}`,
      isError: true,
    });
  }

  let input = block.input;
  const preHook = await context.hooks?.run(
    {
      session_id: context.sessionId,
      cwd: context.workspace,
      hook_event_name: "PreToolUse",
      tool_name: tool.name,
      tool_input: input,
      tool_use_id: block.id,
    },
    context.signal,
  );
  for (const warning of preHook?.warnings ?? []) {
    emit({ type: "hook_warning", event: "PreToolUse", message: warning });
  }
  if (preHook?.halt !== undefined) context.onHalt?.(preHook.halt.reason);
  if (preHook?.updatedInput !== undefined) input = preHook.updatedInput;

  const parsed = tool.inputSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`)
      .join("; ");
    return finish(validationError(tool, issues));
  }
  const validInput = parsed.data as Record<string, unknown>;

  const verdict = evaluatePermission(
    tool.name,
    validInput,
    context.rules,
    context.workspace,
    context.home === undefined ? {} : { home: context.home },
  );
  const hookBlockedWithoutDecision =
    preHook?.blocked === true && preHook.permissionDecision !== "deny";
  if (hookBlockedWithoutDecision) {
    const reason = preHook.reason ?? "a PreToolUse hook blocked it";
    emit({ type: "permission_denied", toolUseId: block.id, name: tool.name, reason });
    return finish({ content: `Blocked by hook: ${reason}`, isError: true });
  }
  const request = { toolName: tool.name, input: validInput, reason: verdict.reason };
  const decision = await decide(verdict, preHook?.permissionDecision, request, context);
  if (!decision.allowed) {
    const reason =
      preHook?.reason && preHook.permissionDecision === "deny" ? preHook.reason : decision.reason;
    emit({ type: "permission_denied", toolUseId: block.id, name: tool.name, reason });
    return finish({ content: `Permission denied: ${reason}`, isError: true });
  }

  if (context.background !== undefined && shouldRunBackground(tool.name, validInput)) {
    const command = String(validInput.command);
    const taskId = context.background.start(command, block.id);
    emit({ type: "task_start", taskId, command, toolUseId: block.id });
    return finish({
      content: `Started background task ${taskId}. Its result will arrive as a <task_notification> in a later message; do not wait or poll for it.`,
      isError: false,
    });
  }

  const result = await tool.execute(validInput, {
    workspace: context.workspace,
    signal: context.signal,
  });
  const postHook = await context.hooks?.run(
    {
      session_id: context.sessionId,
      cwd: context.workspace,
      hook_event_name: "PostToolUse",
      tool_name: tool.name,
      tool_input: validInput,
      tool_response: { content: result.content, is_error: result.isError },
      tool_use_id: block.id,
    },
    context.signal,
  );
  for (const warning of postHook?.warnings ?? []) {
    emit({ type: "hook_warning", event: "PostToolUse", message: warning });
  }
  if (postHook?.halt !== undefined) context.onHalt?.(postHook.halt.reason);
  const notes = [
    ...(postHook?.blocked && postHook.reason ? [`PostToolUse hook: ${postHook.reason}`] : []),
    ...(postHook?.additionalContext ?? []),
  ];
  return finish(
    notes.length === 0
      ? result
      : { ...result, content: `${result.content}\n\n${notes.join("\n")}` },
  );
}
