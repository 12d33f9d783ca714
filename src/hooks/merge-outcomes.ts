import type { HookEventName, HookOutcome } from "./types.js";

const DECISION_RANK = { allow: 1, ask: 2, deny: 3 } as const;

/** An outcome in which no hook had anything to say. */
export function emptyOutcome(): HookOutcome {
  return { blocked: false, additionalContext: [], warnings: [] };
}

/**
 * Merges the parts of every hook that ran for one event, in configuration
 * order (not completion order, so the result is deterministic): any block
 * wins and the reasons are joined; deny beats ask beats allow; the last
 * `updatedInput` wins; context, warnings and halt reasons accumulate. For
 * PreToolUse a block is also a `deny`, so either field can be checked.
 */
export function mergeOutcomes(
  event: HookEventName,
  parts: readonly Partial<HookOutcome>[],
): HookOutcome {
  const merged = emptyOutcome();
  const reasons: string[] = [];
  const decisionReasons: string[] = [];
  const haltReasons: string[] = [];
  for (const part of parts) {
    const blocked = part.blocked === true || part.permissionDecision === "deny";
    if (blocked) {
      merged.blocked = true;
      const reason = part.reason ?? part.permissionDecisionReason;
      if (reason !== undefined && reason !== "") reasons.push(reason);
    }
    const decision = part.permissionDecision ?? (blocked ? "deny" : undefined);
    if (decision !== undefined) {
      const current = merged.permissionDecision;
      if (current === undefined || DECISION_RANK[decision] > DECISION_RANK[current]) {
        merged.permissionDecision = decision;
        decisionReasons.length = 0;
      }
      const reason = part.permissionDecisionReason ?? part.reason;
      if (merged.permissionDecision === decision && reason !== undefined && reason !== "") {
        decisionReasons.push(reason);
      }
    }
    if (part.updatedInput !== undefined) merged.updatedInput = part.updatedInput;
    merged.additionalContext.push(...(part.additionalContext ?? []));
    merged.warnings.push(...(part.warnings ?? []));
    if (part.halt !== undefined) {
      merged.halt = { reason: "" };
      if (part.halt.reason !== "") haltReasons.push(part.halt.reason);
    }
  }
  if (reasons.length > 0) merged.reason = reasons.join("\n");
  if (merged.halt !== undefined) merged.halt.reason = haltReasons.join("\n");
  if (event !== "PreToolUse") {
    delete merged.permissionDecision;
  } else if (decisionReasons.length > 0) {
    merged.permissionDecisionReason = decisionReasons.join("\n");
  }
  return merged;
}
