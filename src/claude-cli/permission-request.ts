import { isRecord } from "./turn-result.js";

/** A `can_use_tool` control request from a CLI started with `--permission-prompt-tool stdio`. */
export interface PermissionRequest {
  requestId: string;
  toolName: string;
  input: Record<string, unknown>;
  toolUseId: string | undefined;
  /** The whole `request` object as the CLI sent it (suggestions, blocked path, ...). */
  raw: Record<string, unknown>;
}

export type PermissionDecision =
  | { behavior: "allow"; updatedInput?: Record<string, unknown> }
  | { behavior: "deny"; message: string };

export type PermissionHandler = (
  request: PermissionRequest,
) => PermissionDecision | Promise<PermissionDecision>;

export const NO_HANDLER_DENIAL =
  "Denied: this Claude process has no permission handler, so tools that need approval are refused.";

/** Reads a `control_request` line with subtype `can_use_tool`; undefined for anything else. */
export function parsePermissionRequest(
  line: Record<string, unknown>,
): PermissionRequest | undefined {
  const request = line.request;
  if (line.type !== "control_request" || !isRecord(request)) return undefined;
  if (request.subtype !== "can_use_tool" || typeof line.request_id !== "string") return undefined;
  return {
    requestId: line.request_id,
    toolName: typeof request.tool_name === "string" ? request.tool_name : "",
    input: isRecord(request.input) ? request.input : {},
    toolUseId: typeof request.tool_use_id === "string" ? request.tool_use_id : undefined,
    raw: request,
  };
}

/**
 * Asks the handler and shapes its answer as the CLI expects it. Never rejects: a missing or
 * failing handler denies with a reason the model can read.
 */
export async function decidePermission(
  request: PermissionRequest,
  handler: PermissionHandler | undefined,
): Promise<Record<string, unknown>> {
  let decision: PermissionDecision;
  try {
    decision = handler ? await handler(request) : { behavior: "deny", message: NO_HANDLER_DENIAL };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    decision = { behavior: "deny", message: `Denied: the permission check failed (${reason}).` };
  }
  const response =
    decision.behavior === "allow"
      ? { behavior: "allow", updatedInput: decision.updatedInput ?? request.input }
      : { behavior: "deny", message: decision.message };
  return {
    type: "control_response",
    response: { subtype: "success", request_id: request.requestId, response },
  };
}

/** The answer to a control request this runner does not implement, so the CLI never waits. */
export function unsupportedControlResponse(
  requestId: string,
  subtype: unknown,
): Record<string, unknown> {
  return {
    type: "control_response",
    response: {
      subtype: "error",
      request_id: requestId,
      error: `control request ${String(subtype)} is not supported by this host`,
    },
  };
}
