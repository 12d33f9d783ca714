/**
 * `rudder/agent`: the agent kernel as a library: a `Session` over the loop,
 * the five tools, the permission gate, hooks, background tasks and models.
 */

export { BackgroundManager, shouldRunBackground } from "../background/background-manager.js";
export { formatNotification, formatNotifications } from "../background/notification.js";
export { createHookRunner } from "../hooks/hook-registry.js";
export {
  HOOK_EVENTS,
  type HookEventName,
  type HookInput,
  type HookOutcome,
} from "../hooks/types.js";
export { createAnthropicModel } from "../model/anthropic-model.js";
export { createDemoModel } from "../model/demo-model.js";
export { modelConfigFromEnv } from "../model/model-config.js";
export { createScriptedModel, textReply, toolUseReply } from "../model/scripted-model.js";
export type { Message, Model, ModelOutcome, ModelRequest } from "../model/types.js";
export { evaluatePermission } from "../permissions/evaluate.js";
export type { PermissionRules, PermissionVerdict } from "../permissions/types.js";
export { createDefaultTools, TOOL_NAMES } from "../tools/default-tools.js";
export type { AnyTool, Tool, ToolContext, ToolResult } from "../tools/types.js";
export { type AgentLoopDependencies, MAX_STOP_CONTINUATIONS, runAgentLoop } from "./agent-loop.js";
export type { AgentEvent, AgentEventSink, TaskStatus, TurnOutcome } from "./events.js";
export { Inbox } from "./inbox.js";
export { Session, type SessionOptions } from "./session.js";
export { loadSettings, type RudderSettings } from "./settings.js";
export { defaultSystemPrompt } from "./system-prompt.js";
export type { Confirm, ConfirmAnswer, ConfirmRequest } from "./tool-dispatch.js";
