import type { HookEventName, HookInput } from "../../src/hooks/types.js";
import { type TempFolder, tempFolder } from "../helpers/temp-folders.js";

export function makeTempDir(): TempFolder {
  return tempFolder("rudder-hooks-");
}

export function hookInput(
  cwd: string,
  event: HookEventName,
  fields: Partial<HookInput> = {},
): HookInput {
  return { session_id: "session-1", cwd, hook_event_name: event, ...fields };
}

export function preToolUse(cwd: string, toolName: string, toolInput: Record<string, unknown>) {
  return hookInput(cwd, "PreToolUse", { tool_name: toolName, tool_input: toolInput });
}

/** A bash command that prints `value` as JSON on stdout. */
export function printJson(value: unknown): string {
  return `printf '%s' '${JSON.stringify(value).replaceAll("'", "'\\''")}'`;
}
