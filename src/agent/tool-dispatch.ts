/**
 * One tool call from the model, in three phases: prepare (the tool, PreToolUse hooks,
 * validation, the permission gate; prepare-tool-use.ts), execute (the tool itself, or the
 * background manager), finalize (PostToolUse hooks, whose notes join the result).
 */
import { shouldRunBackground } from "../background/background-manager.js";
import type { ToolResultBlock, ToolUseBlock } from "../model/types.js";
import { claudeToolResponse, partsAsBlocks } from "../tools/claude-code-response.js";
import type { AnyTool, ToolResult } from "../tools/types.js";
import type { DispatchContext } from "./dispatch-context.js";
import { prepareToolUse } from "./prepare-tool-use.js";
import { judged } from "./tool-permission.js";

export type {
  Confirm,
  ConfirmAnswer,
  ConfirmRequest,
  DispatchContext,
} from "./dispatch-context.js";

function resultBlock(toolUseId: string, result: ToolResult): ToolResultBlock {
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    content: result.parts === undefined ? result.content : partsAsBlocks(result.parts),
    ...(result.isError ? { is_error: true } : {}),
  };
}

/**
 * Runs the tool, or hands a background bash command to the background manager (`background`:
 * no PostToolUse hook runs for it, it has not run yet).
 */
async function executeToolUse(
  block: ToolUseBlock,
  {
    tool,
    input,
    judgedPath,
  }: { tool: AnyTool; input: Record<string, unknown>; judgedPath?: string },
  context: DispatchContext,
): Promise<{ result: ToolResult; background: boolean }> {
  const subject = judged(tool, input);
  if (context.background !== undefined && shouldRunBackground(subject.name, subject.input)) {
    const command = String(input.command);
    const taskId = context.background.start(command, block.id);
    context.emit({ type: "task_start", taskId, command, toolUseId: block.id });
    return {
      background: true,
      result: {
        content: `Started background task ${taskId}. Its result will arrive as a <task_notification> in a later message; do not wait or poll for it.`,
        isError: false,
        details: { tool: "bash", output: "", interrupted: false, backgroundTaskId: taskId },
      },
    };
  }
  const result = await tool.execute(input, {
    workspace: context.workspace,
    signal: context.signal,
    ...(judgedPath === undefined ? {} : { judgedPath }),
  });
  return { result, background: false };
}

/** Runs the PostToolUse hooks; their notes (a block's reason, added context) join the result. */
async function finalizeToolUse(
  block: ToolUseBlock,
  tool: AnyTool,
  input: Record<string, unknown>,
  result: ToolResult,
  response: unknown,
  context: DispatchContext,
): Promise<ToolResult> {
  const postHook = await context.hooks?.run(
    {
      session_id: context.sessionId,
      cwd: context.workspace,
      hook_event_name: "PostToolUse",
      tool_name: tool.name,
      tool_input: input,
      tool_response: response,
      tool_use_id: block.id,
    },
    context.signal,
  );
  for (const warning of postHook?.warnings ?? []) {
    context.emit({ type: "hook_warning", event: "PostToolUse", message: warning });
  }
  if (postHook?.halt !== undefined) context.onHalt?.(postHook.halt.reason);
  const notes = [
    ...(postHook?.blocked && postHook.reason ? [`PostToolUse hook: ${postHook.reason}`] : []),
    ...(postHook?.additionalContext ?? []),
  ];
  return notes.length === 0
    ? result
    : { ...result, content: `${result.content}\n\n${notes.join("\n")}` };
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
  const finish = (result: ToolResult, response = claudeToolResponse(result)): ToolResultBlock => {
    emit({
      type: "tool_end",
      toolUseId: block.id,
      name: block.name,
      content: result.content,
      isError: result.isError,
      response,
      ...(result.parts === undefined ? {} : { blocks: partsAsBlocks(result.parts) }),
    });
    return resultBlock(block.id, result);
  };

  const prepared = await prepareToolUse(block, context);
  if (!prepared.ready) {
    if (prepared.denied !== undefined) {
      const { toolName, reason } = prepared.denied;
      emit({ type: "permission_denied", toolUseId: block.id, name: toolName, reason });
    }
    return finish(prepared.result);
  }
  const { tool, input } = prepared;
  const executed = await executeToolUse(block, prepared, context);
  if (executed.background) return finish(executed.result);
  const response = claudeToolResponse(executed.result);
  return finish(
    await finalizeToolUse(block, tool, input, executed.result, response, context),
    response,
  );
}
