/**
 * The permission side of a tool call: the gate's verdict (for a linked file, its real path's
 * too), combined with a PreToolUse hook's decision and, for an `ask`, a person's answer, whose
 * replacement input is validated and judged again.
 */
import { realpathSync } from "node:fs";
import { relative, sep } from "node:path";
import * as v from "valibot";
import { evaluatePermission } from "../permissions/evaluate.js";
import type { PermissionVerdict } from "../permissions/types.js";
import type { AnyTool } from "../tools/types.js";
import { resolveInWorkspace } from "../tools/workspace-path.js";
import type { ConfirmRequest, DispatchContext } from "./dispatch-context.js";

export interface Decision {
  allowed: boolean;
  reason: string;
  /** The input to run instead, when the person who confirmed changed it. */
  updatedInput?: Record<string, unknown>;
}

/** Combines the gate's verdict with a PreToolUse hook's explicit decision. */
export async function decide(
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
export function verdictFor(
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
export function judged(
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
export function confirmedInput(
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
