/**
 * The HTTP API's shapes as the page reads them. Message and event types come
 * from the gateway's contract so the page and the server cannot drift.
 */
export type { AgentEvent, TurnOutcome } from "../../src/agent/events.js";
export type {
  Disposition,
  GatewayEvent,
  MessageState,
  PermissionRequestInfo,
  PermissionResolver,
  PermissionVerdict,
  StoredMessage,
} from "../../src/gateway/events.js";

export interface Health {
  ok: boolean;
  version: string;
  engine: string;
  demo: boolean;
  hint?: string;
}

export interface ChannelSummary {
  id: string;
  sessionId: string | null;
  /** The brief calls it `lastActivity`; the store's record says `lastActivityAt`. */
  lastActivity?: string | number | null;
  lastActivityAt?: string | number | null;
  /** A turn is running on the channel. */
  inflight?: boolean;
  /** The channel has a live agent process. */
  live?: boolean;
}

export interface Runner {
  channelId: string;
  pid: number | null;
  /** Turns in flight: a count or a flag, depending on the registry. */
  inflight: number | boolean;
  idleSince: string | number | null;
  sessionId: string | null;
  /** Started for one turn because every kept process was busy. */
  oneShot?: boolean;
}

export interface Schedule {
  id: string | number;
  cron: string;
  channelId: string;
  prompt: string;
  paused: boolean;
  lastRunAt: string | number | null;
  nextRunAt: string | number | null;
  lastError: string | null;
  consecutiveFailures?: number;
}
