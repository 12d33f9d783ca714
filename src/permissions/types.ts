export type PermissionDecision = "allow" | "ask" | "deny";

export interface PermissionVerdict {
  decision: PermissionDecision;
  reason: string;
}

/**
 * User rules in Claude Code's syntax, e.g. `Bash(npm run test:*)`,
 * `Read(./secrets/**)`, `Edit`. Evaluated deny, then ask, then allow.
 */
export interface PermissionRules {
  allow: string[];
  ask: string[];
  deny: string[];
}

export function emptyRules(): PermissionRules {
  return { allow: [], ask: [], deny: [] };
}
