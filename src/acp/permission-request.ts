import type {
  PermissionOption,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from "@agentclientprotocol/sdk";
import type { Confirm } from "../agent/tool-dispatch.js";
import { toolCallView } from "./tool-call-view.js";

const OPTIONS: PermissionOption[] = [
  { optionId: "allow_once", name: "Allow", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

/** The session rule an "always" answer adds: the exact command for bash (`Bash`), else the tool. */
export function alwaysRule(toolName: string, input: Record<string, unknown>): string {
  return (toolName === "bash" || toolName === "Bash") && typeof input.command === "string"
    ? `Bash(${input.command})`
    : toolName;
}

export interface PermissionAsker {
  sessionId: string;
  workspace: string;
  /** The tool call being decided (the last `tool_start`). */
  toolCallId: () => string;
  request: (params: RequestPermissionRequest) => Promise<RequestPermissionResponse>;
  /** The session's "always" answers (`alwaysRule`s), checked before asking. */
  always: Set<string>;
}

/**
 * The gate's `ask` as `session/request_permission`: allow once, always (adds a session rule:
 * the same call is allowed without asking for the rest of the session, even where a settings
 * rule says ask; the gate's denials never reach here) or reject. A cancelled or failed request
 * denies.
 */
export function acpConfirm(asker: PermissionAsker): Confirm {
  return async (request, signal) => {
    const rule = alwaysRule(request.toolName, request.input);
    if (asker.always.has(rule)) return true;
    const view = toolCallView(request.toolName, request.input, asker.workspace);
    const pending = asker.request({
      sessionId: asker.sessionId,
      toolCall: {
        toolCallId: asker.toolCallId(),
        title: view.title,
        kind: view.kind,
        status: "pending",
        locations: view.locations,
        content: view.content,
        rawInput: request.input,
      },
      options: OPTIONS,
    });
    const aborted = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      signal.addEventListener("abort", () => resolve(undefined), { once: true });
    });
    const answer = await Promise.race([pending.catch(() => undefined), aborted]);
    const outcome = answer?.outcome;
    if (outcome?.outcome !== "selected") return false;
    if (outcome.optionId === "allow_always") {
      asker.always.add(rule);
      return true;
    }
    return outcome.optionId === "allow_once";
  };
}
