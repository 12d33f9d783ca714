import { realpathSync } from "node:fs";
import { relative, sep } from "node:path";
import * as v from "valibot";
import type { BackgroundManager } from "../background/background-manager.js";
import { shouldRunBackground } from "../background/background-manager.js";
import type { HookRunner } from "../hooks/types.js";
import type { ToolResultBlock, ToolUseBlock } from "../model/types.js";
import { loadBashParser } from "../permissions/bash-parser.js";
import { evaluatePermission } from "../permissions/evaluate.js";
import type { PermissionRules, PermissionVerdict } from "../permissions/types.js";
import { claudeToolResponse, partsAsBlocks } from "../tools/claude-code-response.js";
import type { AnyTool, ToolResult } from "../tools/types.js";
import { resolveInWorkspace } from "../tools/workspace-path.js";
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

interface Decision {
  allowed: boolean;
  reason: string;
  /** The input to run instead, when the person who confirmed changed it. */
  updatedInput?: Record<string, unknown>;
}

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

function resultBlock(toolUseId: string, result: ToolResult): ToolResultBlock {
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    content: result.parts === undefined ? result.content : partsAsBlocks(result.parts),
    ...(result.isError ? { is_error: true } : {}),
  };
}

/** "path: what is wrong" for the model; a missing field reads "path: required". */
function describeIssue(issue: v.BaseIssue<unknown>): string {
  const missing = issue.kind === "schema" && issue.type === "object" && issue.input === undefined;
  return `${v.getDotPath(issue) ?? "input"}: ${missing ? "required" : issue.message}`;
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
): Promise<Decision> {
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
  const answer = await context.confirm(request, context.signal).catch(() => false);
  const { allowed, message, updatedInput } =
    typeof answer === "boolean"
      ? { allowed: answer, message: undefined, updatedInput: undefined }
      : answer;
  if (!allowed) return { allowed, reason: message || `${verdict.reason} (not confirmed)` };
  return { allowed, reason: "confirmed", ...(updatedInput ? { updatedInput } : {}) };
}

/**
 * The permission verdict for an input, with the caller's home for `~/` rules and
 * the bash posture. A file tool's path is judged as given and, when a symbolic
 * link leads elsewhere inside the workspace, as the real path too (a link must
 * not lift a deny rule or a protected path); the stricter verdict wins.
 */
function verdictFor(
  tool: AnyTool,
  toolInput: Record<string, unknown>,
  context: DispatchContext,
): PermissionVerdict & { judgedPath?: string } {
  const { name, input } = judged(tool, toolInput);
  const sandboxed =
    typeof context.bashSandboxed === "function"
      ? name === "bash" && typeof input.command === "string"
        ? context.bashSandboxed(input.command)
        : undefined
      : context.bashSandboxed;
  const options = {
    ...(context.home === undefined ? {} : { home: context.home }),
    ...(sandboxed === undefined ? {} : { sandboxed }),
    ...(context.askBeforeDestroying === true ? { askBeforeDestroying: true } : {}),
  };
  const given = evaluatePermission(name, input, context.rules, context.workspace, options);
  if (given.decision === "deny" || typeof input.path !== "string" || name === "glob") {
    return given;
  }
  const resolved = resolveInWorkspace(context.workspace, input.path);
  if (!resolved.ok) return given;
  const judgedPath = resolved.path;
  const real = relative(realpathSync(context.workspace), judgedPath).split(sep).join("/") || ".";
  if (real === input.path) return { ...given, judgedPath };
  const linked = evaluatePermission(
    name,
    { ...input, path: real },
    context.rules,
    context.workspace,
    options,
  );
  const rank = { allow: 0, ask: 1, deny: 2 } as const;
  return { ...(rank[linked.decision] > rank[given.decision] ? linked : given), judgedPath };
}

/** The call as the gate judges it: a tool that serves another (`Read`) as that one's call. */
function judged(
  tool: AnyTool,
  input: Record<string, unknown>,
): { name: string; input: Record<string, unknown> } {
  return tool.aliasOf === undefined
    ? { name: tool.name, input }
    : { name: tool.aliasOf.name, input: tool.aliasOf.input(input) };
}

/**
 * A replacement input from whoever confirmed: validated like the model's,
 * and still subject to deny rules (a confirmation is not a licence to run
 * what the deny list forbids).
 */
function confirmedInput(
  tool: AnyTool,
  updatedInput: Record<string, unknown>,
  context: DispatchContext,
):
  | { ok: true; input: Record<string, unknown>; judgedPath?: string }
  | { ok: false; reason: string } {
  const parsed = v.safeParse(tool.inputSchema, updatedInput);
  if (!parsed.success) return { ok: false, reason: "the confirmed replacement input is invalid" };
  const input = parsed.output as Record<string, unknown>;
  const verdict = verdictFor(tool, input, context);
  if (verdict.decision === "deny") return { ok: false, reason: verdict.reason };
  return {
    ok: true,
    input,
    ...(verdict.judgedPath === undefined ? {} : { judgedPath: verdict.judgedPath }),
  };
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

  const parsed = v.safeParse(tool.inputSchema, input);
  if (!parsed.success) {
    const issues = parsed.issues.map(describeIssue).join("; ");
    return finish(validationError(tool, issues));
  }
  let validInput = parsed.output as Record<string, unknown>;
  const deny = (reason: string, prefix = "Permission denied") => {
    emit({ type: "permission_denied", toolUseId: block.id, name: tool.name, reason });
    return finish({ content: `${prefix}: ${reason}`, isError: true });
  };
  // The grammar is loaded when the first bash command is judged, not at start-up.
  if (judged(tool, validInput).name === "bash") {
    const failure = await loadBashParser().then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    if (failure !== undefined) return deny(`the gate could not load its bash parser: ${failure}`);
  }
  const verdict = verdictFor(tool, validInput, context);
  if (preHook?.blocked === true && preHook.permissionDecision !== "deny") {
    return deny(preHook.reason ?? "a PreToolUse hook blocked it", "Blocked by hook");
  }
  const request: ConfirmRequest = {
    toolName: tool.name,
    input: validInput,
    reason: verdict.reason,
    ...(verdict.guarded === true ? { guarded: true } : {}),
  };
  const decision = await decide(verdict, preHook?.permissionDecision, request, context);
  if (!decision.allowed) {
    const hookDenied = preHook?.reason && preHook.permissionDecision === "deny";
    return deny(hookDenied ? (preHook.reason as string) : decision.reason);
  }
  let judgedFinal = verdict.judgedPath;
  if (decision.updatedInput !== undefined) {
    const replacement = confirmedInput(tool, decision.updatedInput, context);
    if (!replacement.ok) return deny(replacement.reason);
    validInput = replacement.input;
    judgedFinal = replacement.judgedPath;
  }

  const subject = judged(tool, validInput);
  if (context.background !== undefined && shouldRunBackground(subject.name, subject.input)) {
    const command = String(validInput.command);
    const taskId = context.background.start(command, block.id);
    emit({ type: "task_start", taskId, command, toolUseId: block.id });
    return finish({
      content: `Started background task ${taskId}. Its result will arrive as a <task_notification> in a later message; do not wait or poll for it.`,
      isError: false,
      details: { tool: "bash", output: "", interrupted: false, backgroundTaskId: taskId },
    });
  }

  const result = await tool.execute(validInput, {
    workspace: context.workspace,
    signal: context.signal,
    ...(judgedFinal === undefined ? {} : { judgedPath: judgedFinal }),
  });
  const response = claudeToolResponse(result);
  const postHook = await context.hooks?.run(
    {
      session_id: context.sessionId,
      cwd: context.workspace,
      hook_event_name: "PostToolUse",
      tool_name: tool.name,
      tool_input: validInput,
      tool_response: response,
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
    response,
  );
}
