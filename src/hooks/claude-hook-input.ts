import { resolve } from "node:path";
import { claudeToolInput, claudeToolName } from "./tool-names.js";
import type { HookInput } from "./types.js";

/**
 * The JSON a command hook reads on stdin, field for field as Claude Code
 * writes it: `tool_name` is Claude Code's (`Bash`), and file tools' inputs
 * also carry Claude Code's spellings (`file_path`, absolute). Fields the
 * input lacks are left out, except that Stop always says `stop_hook_active`.
 */
export function claudeHookInput(input: HookInput): Record<string, unknown> {
  const json: Record<string, unknown> = { session_id: input.session_id };
  if (input.transcript_path !== undefined) json.transcript_path = input.transcript_path;
  json.cwd = input.cwd;
  json.hook_event_name = input.hook_event_name;
  if (input.prompt !== undefined) json.prompt = input.prompt;
  if (input.tool_name !== undefined) {
    json.tool_name = claudeToolName(input.tool_name);
    if (input.tool_input !== undefined) {
      json.tool_input = claudeToolInput(input.tool_name, input.tool_input, (path) =>
        resolve(input.cwd, path),
      );
    }
  } else if (input.tool_input !== undefined) {
    json.tool_input = input.tool_input;
  }
  if (input.tool_response !== undefined) json.tool_response = input.tool_response;
  if (input.tool_use_id !== undefined) json.tool_use_id = input.tool_use_id;
  if (input.hook_event_name === "Stop") json.stop_hook_active = input.stop_hook_active ?? false;
  else if (input.stop_hook_active !== undefined) json.stop_hook_active = input.stop_hook_active;
  return json;
}
