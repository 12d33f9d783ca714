/**
 * The first phase of a tool call: find the tool, run the PreToolUse hooks (which may change
 * the input or halt the turn), validate the input, and pass the permission gate (asking a
 * person when it says `ask`). Ends with the input to run, or the result to answer instead.
 */
import * as v from "valibot";
import type { ToolUseBlock } from "../model/types.js";
import { BashParserNotLoadedError, loadBashParser } from "../permissions/bash-parser.js";
import type { AnyTool, ToolResult } from "../tools/types.js";
import type { ConfirmRequest, DispatchContext } from "./dispatch-context.js";
import { confirmedInput, decide, verdictFor } from "./tool-permission.js";

/**
 * Ready: the tool and its input (validated, confirmed), with the real path the gate judged
 * for a file tool (`ToolContext.judgedPath`). Refused: the result to answer
 * instead, with `denied` (the reason) when the gate or a hook refused it.
 */
export type PreparedToolUse =
  | { ready: true; tool: AnyTool; input: Record<string, unknown>; judgedPath?: string }
  | { ready: false; result: ToolResult; denied?: { toolName: string; reason: string } };

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

/** A refusal by the gate or a hook, answered as `<prefix>: <reason>`. */
function refused(tool: AnyTool, reason: string, prefix = "Permission denied"): PreparedToolUse {
  return {
    ready: false,
    result: { content: `${prefix}: ${reason}`, isError: true },
    denied: { toolName: tool.name, reason },
  };
}

export async function prepareToolUse(
  block: ToolUseBlock,
  context: DispatchContext,
): Promise<PreparedToolUse> {
  const { emit } = context;
  const tool = context.tools.find((candidate) => candidate.name === block.name);
  if (tool === undefined) {
    const names = context.tools.map((candidate) => candidate.name).join(", ");
    return {
      ready: false,
      result: { content: `Error: unknown tool "${block.name}". Tools: ${names}`, isError: true },
    };
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
    return { ready: false, result: validationError(tool, issues) };
  }
  const validInput = parsed.output as Record<string, unknown>;
  const gate = await withBashGrammar(() => verdictFor(tool, validInput, context));
  if (!gate.ok) return refused(tool, gate.reason);
  const verdict = gate.value;
  if (preHook?.blocked === true && preHook.permissionDecision !== "deny") {
    return refused(tool, preHook.reason ?? "a PreToolUse hook blocked it", "Blocked by hook");
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
    return refused(tool, hookDenied ? (preHook.reason as string) : decision.reason);
  }
  if (decision.updatedInput === undefined) {
    return {
      ready: true,
      tool,
      input: validInput,
      ...(verdict.judgedPath === undefined ? {} : { judgedPath: verdict.judgedPath }),
    };
  }
  const { updatedInput } = decision;
  const confirmed = await withBashGrammar(() => confirmedInput(tool, updatedInput, context));
  if (!confirmed.ok) return refused(tool, confirmed.reason);
  const replacement = confirmed.value;
  if (!replacement.ok) return refused(tool, replacement.reason);
  return {
    ready: true,
    tool,
    input: replacement.input,
    ...(replacement.judgedPath === undefined ? {} : { judgedPath: replacement.judgedPath }),
  };
}

/**
 * Runs the gate's `judge`, loading the bash grammar first when the command turns out to need
 * it: it is loaded at the first command with shell syntax (a line of plain words is read
 * without it: permissions/plain-command.ts), not at start-up. A failed load is a refusal.
 */
async function withBashGrammar<T>(
  judge: () => T,
): Promise<{ ok: true; value: T } | { ok: false; reason: string }> {
  try {
    return { ok: true, value: judge() };
  } catch (error) {
    if (!(error instanceof BashParserNotLoadedError)) throw error;
  }
  const failure = await loadBashParser().then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  if (failure !== undefined) {
    return { ok: false, reason: `the gate could not load its bash parser: ${failure}` };
  }
  return { ok: true, value: judge() };
}
