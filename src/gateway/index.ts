/** The gateway's public surface, for `rudder serve|send|schedule` and embedders. */
export type { AgentProcess, ProcessPool, RunnerInfo } from "./agents/agent-process.js";
export {
  DEFAULT_PERMISSION_TIMEOUT_MS,
  type DecideOutcome,
  PermissionRequests,
} from "./agents/permission-requests.js";
export { GatewayBindings } from "./bindings/bindings.js";
export { type Budget, BudgetSchema, type ChannelBudget } from "./bindings/budget-schema.js";
export { ConfigError } from "./bindings/config-error.js";
export { type LoadedConfig, loadGatewayConfig } from "./bindings/load-gateway-config.js";
export {
  type BindingFallback,
  DEFAULTS_BINDING,
  type EngineName,
  type ResolvedBinding,
} from "./bindings/resolved-binding.js";
export {
  CHANNEL_ID_PATTERN,
  type ChannelSource,
  type DeliveryMeta,
  isValidChannelId,
  type SourceContext,
  type SourceDelivery,
} from "./channel-source.js";
export { EventBus, type NumberedEvent } from "./event-bus.js";
export type {
  Disposition,
  GatewayEvent,
  MessageState,
  PermissionRequestInfo,
  PermissionResolver,
  PermissionVerdict,
  StoredMessage,
} from "./events.js";
export type {
  AgentInfo,
  GatewayEngine,
  GatewayOptions,
  RunningGateway,
} from "./gateway-options.js";
export { loadOrCreateToken, readToken } from "./http/auth-token.js";
export {
  createGatewayClient,
  type GatewayClient,
  type GatewayClientOptions,
  GatewayRequestError,
} from "./http/gateway-client.js";
export type { HealthInfo } from "./http/health-route.js";
export { MAX_BODY_BYTES } from "./http/http-app.js";
export { TrustedProxies } from "./http/trusted-proxies.js";
export { type Delivery, GatewayClosedError, Router, type RouterOptions } from "./routing/router.js";
export type { SettledMessage } from "./routing/settlements.js";
export {
  InvalidScheduleError,
  MAX_CONSECUTIVE_FAILURES,
  Scheduler,
} from "./scheduler/scheduler.js";
export { startGateway } from "./start-gateway.js";
export type {
  ChannelGrant,
  ChannelGrants,
  NewOutbound,
  OutboundEntry,
  OutboundKind,
  OutboundLedger,
  OutboundState,
  PairingBook,
  PairingRequest,
  SourceStore,
} from "./store/source-store.js";
export { SqliteGatewayStore } from "./store/sqlite/sqlite-store.js";
export type {
  ChannelRecord,
  GatewayStore,
  MessageRecord,
  ScheduleRecord,
  TurnRecord,
} from "./store/store.js";
export { redactedUrl, type StoreLocation, storeLocation } from "./store/store-location.js";
export { StoreUnavailableError } from "./store/store-unavailable-error.js";
