import { randomUUID } from "../agent/random-uuid.js";
import type { HostControls } from "./host-controls.js";
import { controlError, controlSuccess, type OutputLine, type SessionInfo } from "./output-lines.js";
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from "./permission-mode.js";

/** What `initialize` may set before the session's first turn. */
export interface PromptOverrides {
  systemPrompt?: string;
  appendSystemPrompt?: string;
}

/** The front end's side of the control requests a host sends. */
export interface ControlTarget {
  info: Omit<SessionInfo, "permissionMode">;
  mode(): PermissionMode;
  setMode(mode: PermissionMode): void;
  running(): boolean;
  /** Aborts the running turn; returns the uuids of messages still queued behind it. */
  interrupt(): string[];
  /** Called for `initialize` with what it asks for; false once the session exists. */
  setPromptOverrides(overrides: PromptOverrides): boolean;
  /** Registers the host's hook callbacks (`initialize`'s `hooks`). */
  registerHooks(hooks: unknown): void;
  /**
   * Starts what the first turn needs (MCP servers), with the `mcpServers` an
   * `initialize` sent; resolves once they run, true when those were taken.
   */
  prepare(mcpServers: Record<string, unknown> | undefined): Promise<boolean>;
  /** The model switch, model list and MCP state (`set_model`, `initialize`, `mcp_status`). */
  controls: HostControls;
  warn(message: string): void;
}

/** `initialize` fields of Agent SDK features rudder does not offer, named in a warning. */
const UNSUPPORTED_INITIALIZE_FIELDS = ["agents", "jsonSchema"];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function joinPrompt(value: unknown): string | undefined {
  const text = Array.isArray(value)
    ? value.filter((part) => typeof part === "string").join("\n")
    : typeof value === "string"
      ? value
      : undefined;
  return text === undefined || text.trim() === "" ? undefined : text;
}

/**
 * Answers `initialize`. MCP servers sent in it (the Agent SDK's
 * `mcpServersDelivery: "initialize"`) are started before the answer, which
 * says so in `mcp_servers_applied`, as the SDK checks; the host's in-process
 * servers (`sdkMcpServers`) start with them.
 */
function initialize(
  request: Record<string, unknown>,
  target: ControlTarget,
): Record<string, unknown> | Promise<Record<string, unknown>> {
  const systemPrompt = joinPrompt(request.systemPrompt);
  const appendSystemPrompt = joinPrompt(request.appendSystemPrompt);
  const applied = target.setPromptOverrides({
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
    ...(appendSystemPrompt === undefined ? {} : { appendSystemPrompt }),
  });
  if (!applied && (systemPrompt !== undefined || appendSystemPrompt !== undefined)) {
    target.warn("initialize came after the first message; its system prompt is not used");
  }
  const unsupported = UNSUPPORTED_INITIALIZE_FIELDS.filter((field) => {
    const value = request[field];
    return (
      value !== undefined &&
      value !== null &&
      (typeof value !== "object" || Object.keys(value).length > 0)
    );
  });
  if (unsupported.length > 0) {
    target.warn(
      `initialize asked for what rudder does not offer, ignored: ${unsupported.join(", ")}`,
    );
  }
  target.registerHooks(request.hooks);
  const servers = isObject(request.mcpServers) ? request.mcpServers : undefined;
  // The host's in-process servers are reached through `mcp_message` requests while they start,
  // so the answer does not wait for them.
  const sdkServers = Array.isArray(request.sdkMcpServers)
    ? request.sdkMcpServers.filter((name): name is string => typeof name === "string")
    : [];
  const sdkEntries = Object.fromEntries(sdkServers.map((name) => [name, { type: "sdk", name }]));
  const ready = target.prepare(
    servers === undefined && sdkServers.length === 0 ? undefined : { ...servers, ...sdkEntries },
  );
  if (servers === undefined) return initializeAnswer(target);
  return ready.then((applied) => ({ ...initializeAnswer(target), mcp_servers_applied: applied }));
}

function initializeAnswer(target: ControlTarget): Record<string, unknown> {
  const { info } = target;
  return {
    commands: [],
    agents: [],
    output_style: "default",
    available_output_styles: ["default"],
    models: target.controls.models(),
    account: { tokenSource: "none", apiKeySource: info.apiKeySource, apiProvider: "firstParty" },
    pid: process.pid,
    current_permission_mode: target.mode(),
    session_state: target.running() ? "running" : "idle",
    rudder_version: info.version,
    capabilities: [],
    // Hook callbacks' `onFailure: "block"` is honoured (the Agent SDK refuses to start without this).
    hook_on_failure_supported: true,
  };
}

/** Claude Code's success answer that carries no `response` (e.g. `set_max_thinking_tokens`). */
function bareSuccess(requestId: string): OutputLine {
  return { type: "control_response", response: { subtype: "success", request_id: requestId } };
}

/** After a mode change Claude Code prints this status line, which hosts follow. */
function modeStatusLine(sessionId: string, mode: PermissionMode): OutputLine {
  return {
    type: "system",
    subtype: "status",
    status: null,
    permissionMode: mode,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

function setPermissionMode(
  requestId: string,
  request: Record<string, unknown>,
  target: ControlTarget,
): OutputLine | OutputLine[] {
  const mode = typeof request.mode === "string" ? request.mode : "";
  if (!isPermissionMode(mode)) {
    const modes = [...PERMISSION_MODES].sort().join(", ");
    return controlError(
      requestId,
      `Cannot set permission mode: must be one of ${modes}`,
      "invalid_mode",
    );
  }
  target.setMode(mode);
  return [controlSuccess(requestId, { mode }), modeStatusLine(target.info.sessionId, mode)];
}

function setModel(
  requestId: string,
  request: Record<string, unknown>,
  target: ControlTarget,
): OutputLine {
  const name =
    typeof request.model === "string" && request.model.trim() !== "" ? request.model : undefined;
  const selected = target.controls.setModel(name?.trim());
  return selected.ok
    ? controlSuccess(requestId, { model: selected.model })
    : controlError(requestId, `Cannot set model ${name ?? "default"}: ${selected.error}`);
}

/** rudder sends no thinking budget; a positive one is accepted (as Claude Code does) and noted. */
function setMaxThinkingTokens(
  requestId: string,
  request: Record<string, unknown>,
  target: ControlTarget,
): OutputLine {
  const tokens = request.max_thinking_tokens;
  if (typeof tokens === "number" && tokens > 0) {
    target.warn(`rudder does not use extended thinking; max_thinking_tokens ${tokens} is ignored`);
  }
  return bareSuccess(requestId);
}

/**
 * Answers one `control_request` from the host, in Claude Code's shapes (measured on 2.1.328):
 * `initialize`, `interrupt`, `set_permission_mode` (then a `system/status` line),
 * `set_model`, `set_max_thinking_tokens` and `mcp_status` are served; any other subtype gets
 * Claude Code's `unsupported_request` error. Only an `initialize` carrying MCP servers is
 * answered later (a promise that never rejects).
 */
export function answerControlRequest(
  requestId: string,
  request: Record<string, unknown> & { subtype: string },
  target: ControlTarget,
): OutputLine | OutputLine[] | Promise<OutputLine> {
  switch (request.subtype) {
    case "initialize": {
      const answer = initialize(request, target);
      return answer instanceof Promise
        ? answer.then((response) => controlSuccess(requestId, response))
        : controlSuccess(requestId, answer);
    }
    case "interrupt":
      return controlSuccess(requestId, { still_queued: target.interrupt() });
    case "set_permission_mode":
      return setPermissionMode(requestId, request, target);
    case "set_model":
      return setModel(requestId, request, target);
    case "set_max_thinking_tokens":
      return setMaxThinkingTokens(requestId, request, target);
    case "mcp_status":
      return controlSuccess(requestId, { mcpServers: target.controls.mcpStatus() });
    default:
      return controlError(
        requestId,
        `Unsupported control request subtype: ${request.subtype}`,
        "unsupported_request",
      );
  }
}
