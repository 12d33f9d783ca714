/**
 * The HTTP API's shapes as the page reads them. Message and event types come
 * from the gateway's contract so the page and the server cannot drift.
 */
export type { AgentEvent, TurnOutcome } from "../../src/agent/events.js";
export type { ContextUsage } from "../../src/gateway/agents/context-usage.js";
export type { SpendFigures, SpendReport } from "../../src/gateway/budgets/spend-report.js";
export type {
  Disposition,
  GatewayEvent,
  MessageState,
  PermissionRequestInfo,
  PermissionResolver,
  PermissionVerdict,
  StoredMessage,
} from "../../src/gateway/events.js";

import type { RunnerInfo } from "../../src/gateway/agents/agent-process.js";
import type { ChannelRecord, ScheduleRecord } from "../../src/gateway/store/store.js";
import type { WorktreeStatus } from "../../src/gateway/worktrees/channel-worktrees.js";

export type { WorktreeStatus };

export interface Health {
  ok: boolean;
  version: string;
  engine: string;
  demo: boolean;
  hint?: string;
}

/** `GET /api/info`: where and how the gateway's agents work. */
export interface AgentInfo {
  cwd: string;
  engine: string;
  model: string;
  sandbox: boolean;
}

/** `GET /api/channels`: the stored channel, with whether a turn runs and a process lives. */
export type ChannelSummary = ChannelRecord & {
  inflight: boolean;
  live: boolean;
  /** The channel's own git worktree, when its binding gives it one. */
  worktree?: WorktreeStatus;
};

/** `GET /api/runners` */
export type Runner = RunnerInfo;

/** `GET /api/schedules` */
export type Schedule = ScheduleRecord;
