export type PermissionDecision = "allow" | "ask" | "deny";

export interface PermissionVerdict {
  decision: PermissionDecision;
  reason: string;
  /**
   * On an `ask` for a protected configuration path or a secret location: no
   * permission mode answers it by itself (as Claude Code's protected paths,
   * even in bypass mode); a person must, or an allow rule that names the path.
   */
  guarded?: boolean;
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
