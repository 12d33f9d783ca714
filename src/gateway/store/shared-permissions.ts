import type { PermissionRequestInfo, PermissionResolver, PermissionVerdict } from "../events.js";

/** What answering a stored permission request did. */
export type LedgerAnswer =
  /** This answer settled it; its owner (the worker whose agent waits) was told. */
  | { status: "answered"; owner: string; request: PermissionRequestInfo }
  | { status: "unknown" }
  | { status: "already_decided"; decision: PermissionVerdict }
  /** Its owner no longer drives the channel (it died or lost the lease): nobody waits on it. */
  | { status: "owner_gone"; owner: string };

/** How a stored request was settled. */
export interface LedgerDecision {
  decision: PermissionVerdict;
  /** A denial's message, as the agent receives it. */
  message: string | null;
  resolvedBy: PermissionResolver;
}

/**
 * The permission requests of every worker's agents, in the database several workers share, so
 * that a person answers one through any worker. A request is stored by its owner (the worker
 * whose agent asked) and settled once: by a person through any worker (`answer`, which wakes
 * the owner), or by the owner itself (timeout, turn end, shutdown: `settleOwn`).
 */
export interface SharedPermissions {
  record(owner: string, request: PermissionRequestInfo): Promise<void>;
  /** The channel's unsettled requests whose owner still drives it, oldest first. */
  pending(channelId: string): Promise<PermissionRequestInfo[]>;
  /** A person's decision, applied only if the request is unsettled and its owner alive. */
  answer(
    channelId: string,
    requestId: string,
    verdict: PermissionVerdict,
    message: string | undefined,
  ): Promise<LedgerAnswer>;
  /**
   * The owner settles its own request; null when that settled it, else how it was settled
   * already (a person's answer that got there first, whose wake-up may still be on its way).
   */
  settleOwn(requestId: string, settled: LedgerDecision): Promise<LedgerDecision | null>;
  /** How a request was settled; null while it is not. */
  decision(requestId: string): Promise<LedgerDecision | null>;
  /**
   * Calls `onAnswered` with the id of each request of `owner` a person answered through any
   * worker; `onReconnect` after the listening connection was lost and made again.
   */
  listen(
    owner: string,
    onAnswered: (requestId: string) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }>;
}
