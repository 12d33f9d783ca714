/** The package entry: the public API of rudder as a library. */
export type { AgentEvent, AgentEventSink, TurnOutcome } from "./agent/events.js";
export { ClaudeProcess } from "./claude-cli/claude-process.js";
export {
  type ClaudeProcessOptions,
  DEFAULT_TURN_TIMEOUT_MS,
  type RunTurnOptions,
  type SteerOutcome,
  type SteerStatus,
} from "./claude-cli/claude-process-types.js";
export { ClaudeTimeoutError, RateLimitError } from "./claude-cli/errors.js";
export { wrapExternalContent } from "./claude-cli/external-content.js";
export { NdjsonDecoder, type NdjsonError, type NdjsonHandlers } from "./claude-cli/ndjson.js";
export type {
  PermissionDecision,
  PermissionHandler,
  PermissionRequest,
} from "./claude-cli/permission-request.js";
export { isRateLimitError } from "./claude-cli/rate-limit.js";
export {
  getRegistry,
  type RegistryLogger,
  RunnerRegistry,
  type RunnerRegistryOptions,
  resetRegistryForTests,
} from "./claude-cli/runner-registry.js";
export type { TurnResult } from "./claude-cli/turn-result.js";
