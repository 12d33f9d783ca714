import type { Confirm, ConfirmRequest } from "../agent/tool-dispatch.js";

/** Claude Code's permission modes, as rudder maps them onto its `ask` decisions. */
export const PERMISSION_MODES = [
  "default",
  "acceptEdits",
  "bypassPermissions",
  "dontAsk",
  "plan",
  "auto",
] as const;

export type PermissionMode = (typeof PERMISSION_MODES)[number];

export function isPermissionMode(value: string): value is PermissionMode {
  return (PERMISSION_MODES as readonly string[]).includes(value);
}

/** The file-editing tools under rudder's names and Claude Code's. */
const EDIT_TOOLS = new Set(["write_file", "edit_file", "Write", "Edit"]);

/**
 * The `confirm` for a mode. rudder's gate decides allow/ask/deny first and never passes a
 * built-in deny here, so every mode keeps the machine's deny list:
 * - `bypassPermissions`: every `ask` is allowed;
 * - `acceptEdits`: file edits are allowed, other asks go to `prompt`;
 * - `dontAsk`: every `ask` is denied;
 * - `default`, `plan`, `auto`: asks go to `prompt` (the host), or are denied without one;
 * - in every mode, a guarded ask (a protected path, a secret location) goes to `prompt`.
 * `mode()` is read at each decision, so `set_permission_mode` takes effect at once.
 */
export function confirmForMode(mode: () => PermissionMode, prompt: Confirm | undefined): Confirm {
  return async (request: ConfirmRequest, signal: AbortSignal) => {
    // A protected path or secret location goes to a person in every mode (Claude Code's protected paths).
    if (request.guarded === true) return prompt === undefined ? false : prompt(request, signal);
    const current = mode();
    if (current === "bypassPermissions") return true;
    if (current === "dontAsk") return false;
    if (current === "acceptEdits" && EDIT_TOOLS.has(request.toolName)) return true;
    return prompt === undefined ? false : prompt(request, signal);
  };
}
