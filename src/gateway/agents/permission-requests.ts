import { randomUUID } from "node:crypto";
import type { PermissionDecision, PermissionRequest } from "../../claude-cli/permission-request.js";
import type { EventBus } from "../event-bus.js";
import type { PermissionRequestInfo, PermissionResolver, PermissionVerdict } from "../events.js";
import type { LedgerDecision, SharedPermissions } from "../store/shared-permissions.js";
import type { ChannelGrants } from "../store/source-store.js";
import { grantCovering } from "./channel-grant-match.js";

export const DEFAULT_PERMISSION_TIMEOUT_MS = 5 * 60_000;

/**
 * Permission requests a channel may have waiting at once: past it an agent that asks in a loop
 * is refused at once instead of filling the channel (and the store, when shared) with cards.
 */
export const DEFAULT_MAX_PENDING_PER_CHANNEL = 20;

/** Resolved requests remembered so a second decision is told apart from an unknown id. */
const REMEMBERED_DECISIONS = 1000;

/** What `decide` did: the request it settled, or why it could not. */
export type DecideOutcome =
  | { status: "decided"; request: PermissionRequestInfo & { decision: PermissionVerdict } }
  | { status: "unknown" }
  | { status: "already_decided"; decision: PermissionVerdict }
  /** Raised on another worker that no longer drives the channel (it died): nobody waits. */
  | { status: "owner_gone"; owner: string };

interface Pending {
  info: PermissionRequestInfo;
  resolve: (decision: PermissionDecision) => void;
  timer: NodeJS.Timeout;
}

function description(raw: Record<string, unknown>): string | null {
  for (const key of ["description", "decision_reason", "reason"]) {
    const value = raw[key];
    if (typeof value === "string" && value.trim() !== "") return value;
  }
  return null;
}

function duration(milliseconds: number): string {
  if (milliseconds >= 60_000 && milliseconds % 60_000 === 0) {
    const minutes = milliseconds / 60_000;
    return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  }
  const seconds = Math.round(milliseconds / 100) / 10;
  return `${seconds} second${seconds === 1 ? "" : "s"}`;
}

function asDecision(settled: LedgerDecision): PermissionDecision {
  return settled.decision === "allow"
    ? { behavior: "allow" }
    : { behavior: "deny", message: settled.message ?? "Denied." };
}

export interface PermissionRequestsOptions {
  bus: EventBus;
  timeoutMs?: number;
  /** Requests of one channel waiting at once at most (`DEFAULT_MAX_PENDING_PER_CHANNEL`). */
  maxPendingPerChannel?: number;
  /**
   * Tells the channel's people one line: here, that its agent asks more than the cap allows
   * (said once, until the channel has no request waiting again).
   */
  tell?: (channelId: string, text: string) => void;
  /**
   * With several workers on one database: this worker's name and the requests every worker
   * stores, so that a person answers one through any worker (see SharedPermissions).
   */
  shared?: { worker: string; ledger: SharedPermissions; logger?: (line: string) => void };
  /**
   * The channels' "allow always" grants: a request one covers is allowed without asking (no
   * `permission_request` is published). Unreadable grants cover nothing.
   */
  grants?: ChannelGrants;
}

/**
 * The tool calls agents asked a person about. `ask` is an agent process's
 * permission handler: it publishes `permission_request` and waits until a
 * person decides (`decide`), the timeout denies it, or its turn or process
 * ends (`expire`); each way publishes `permission_resolved`. Never rejects.
 *
 * With `shared`, each request is also stored in the database before it is announced, so
 * `list` and `decide` on any worker see it; a decision made through another worker reaches
 * this one as a wake-up (`answered`). Whichever way settles a request first, in the database,
 * is the one applied: a timeout that loses to a person's answer applies that answer.
 */
export class PermissionRequests {
  readonly #bus: EventBus;
  readonly #timeoutMs: number;
  readonly #shared: PermissionRequestsOptions["shared"];
  readonly #grants: ChannelGrants | undefined;
  readonly #pending = new Map<string, Pending>();
  /** Request id to what a person decided, oldest first. */
  readonly #decided = new Map<string, PermissionVerdict>();
  readonly #maxPending: number;
  readonly #tell: PermissionRequestsOptions["tell"];
  /** Requests waiting, per channel. */
  readonly #pendingCount = new Map<string, number>();
  /** Channels told that their agent asks past the cap; forgotten once none waits. */
  readonly #toldFlood = new Set<string>();
  #closed = false;

  constructor(options: PermissionRequestsOptions) {
    this.#bus = options.bus;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS;
    this.#maxPending = Math.max(1, options.maxPendingPerChannel ?? DEFAULT_MAX_PENDING_PER_CHANNEL);
    this.#tell = options.tell;
    this.#shared = options.shared;
    this.#grants = options.grants;
  }

  /**
   * The refusal for a request past the channel's cap, or undefined when it may wait. The first
   * refusal tells the channel's people once.
   */
  #overCap(channelId: string, toolName: string): PermissionDecision | undefined {
    if ((this.#pendingCount.get(channelId) ?? 0) < this.#maxPending) return undefined;
    if (!this.#toldFlood.has(channelId)) {
      this.#toldFlood.add(channelId);
      this.#tell?.(
        channelId,
        `The agent asked for more permissions than can wait at once (${this.#maxPending}); further requests are denied until these are answered.`,
      );
    }
    return {
      behavior: "deny",
      message: `Denied without asking: ${this.#maxPending} permission requests of this channel already wait for a person (this one was for ${toolName}). Wait for their answers before asking again.`,
    };
  }

  async ask(channelId: string, request: PermissionRequest): Promise<PermissionDecision> {
    if (this.#grants !== undefined && !this.#closed) {
      const grants = await this.#grants.list(channelId).catch(() => []);
      if (grantCovering(grants, request.toolName, request.input)) return { behavior: "allow" };
    }
    return this.#askPerson(channelId, request);
  }

  #askPerson(channelId: string, request: PermissionRequest): Promise<PermissionDecision> {
    if (this.#closed) {
      return Promise.resolve({
        behavior: "deny",
        message: "Denied: the gateway is shutting down.",
      });
    }
    const refused = this.#overCap(channelId, request.toolName);
    if (refused !== undefined) return Promise.resolve(refused);
    const info: PermissionRequestInfo = {
      id: randomUUID(),
      channelId,
      toolName: request.toolName,
      input: request.input,
      description: description(request.raw),
      createdAt: new Date().toISOString(),
    };
    return new Promise<PermissionDecision>((resolve) => {
      const timer = setTimeout(() => {
        const message = `Denied: nobody answered the permission request within ${duration(this.#timeoutMs)}.`;
        void this.#settle(info.id, { behavior: "deny", message }, "timeout");
      }, this.#timeoutMs);
      timer.unref();
      this.#pending.set(info.id, { info, resolve, timer });
      this.#pendingCount.set(channelId, (this.#pendingCount.get(channelId) ?? 0) + 1);
      void this.#announce(info);
    });
  }

  /** Stored first (when shared), so that whoever sees the event can answer it anywhere. */
  async #announce(info: PermissionRequestInfo): Promise<void> {
    if (this.#shared) {
      await this.#shared.ledger.record(this.#shared.worker, info).catch((error: unknown) => {
        this.#shared?.logger?.(
          `gateway: permission request ${info.id} not stored (answerable on this worker only): ${String(error)}`,
        );
      });
    }
    if (!this.#pending.has(info.id)) return;
    this.#bus.publish({ type: "permission_request", request: info, channelId: info.channelId });
  }

  /** Pending requests of a channel, oldest first (with `shared`, every worker's). */
  async list(channelId: string): Promise<PermissionRequestInfo[]> {
    const local = [...this.#pending.values()]
      .map((pending) => pending.info)
      .filter((info) => info.channelId === channelId);
    if (!this.#shared) return local;
    const stored = await this.#shared.ledger.pending(channelId);
    const ids = new Set(stored.map((info) => info.id));
    return [...stored, ...local.filter((info) => !ids.has(info.id))].sort((a, b) =>
      a.createdAt.localeCompare(b.createdAt),
    );
  }

  /** A person's decision; a denial's `message` reaches the agent. */
  async decide(
    channelId: string,
    requestId: string,
    verdict: PermissionVerdict,
    message?: string,
  ): Promise<DecideOutcome> {
    const denial = message?.trim() || "Denied by the person watching this channel.";
    const decision: PermissionDecision =
      verdict === "allow" ? { behavior: "allow" } : { behavior: "deny", message: denial };
    const pending = this.#pending.get(requestId);
    const mine = pending !== undefined && pending.info.channelId === channelId;
    if (this.#shared) {
      const answer = await this.#shared.ledger
        .answer(channelId, requestId, verdict, verdict === "deny" ? denial : undefined)
        .catch((error: unknown) => {
          // The database is out of reach: a request of this worker is still answered here.
          if (!mine) throw error;
          return { status: "unknown" as const };
        });
      if (answer.status === "answered") {
        this.#remember(channelId, requestId, verdict);
        // Its owner is this worker: answered now; else the owner's wake-up answers its agent.
        if (mine) this.#resolve(requestId, decision, "person");
        return { status: "decided", request: { ...answer.request, decision: verdict } };
      }
      if (answer.status !== "unknown") return answer;
      // Unknown there: one of this worker's that could not be stored, or none at all.
    }
    if (!mine) {
      const remembered = this.#decided.get(`${channelId}/${requestId}`);
      return remembered
        ? { status: "already_decided", decision: remembered }
        : { status: "unknown" };
    }
    this.#resolve(requestId, decision, "person");
    this.#remember(channelId, requestId, verdict);
    return { status: "decided", request: { ...pending.info, decision: verdict } };
  }

  /** A person answered one of this worker's requests through another worker. */
  async answered(requestId: string): Promise<void> {
    const pending = this.#pending.get(requestId);
    if (!pending || !this.#shared) return;
    const settled = await this.#shared.ledger.decision(requestId).catch(() => null);
    if (settled === null || settled.resolvedBy !== "person") return;
    this.#resolve(requestId, asDecision(settled), "person");
    this.#remember(pending.info.channelId, requestId, settled.decision);
  }

  /** After missed wake-ups (the listener reconnected): looks each pending request up. */
  async recheck(): Promise<void> {
    await Promise.all([...this.#pending.keys()].map((id) => this.answered(id)));
  }

  /** Denies what a channel's agent still waits on: its turn ended or its process stopped. */
  expire(channelId: string, reason: string): void {
    for (const pending of [...this.#pending.values()]) {
      if (pending.info.channelId !== channelId) continue;
      void this.#settle(
        pending.info.id,
        { behavior: "deny", message: `Denied: ${reason}.` },
        "turn_end",
      );
    }
  }

  /** Denies everything pending and every later request (gateway shutdown). */
  close(): void {
    this.#closed = true;
    for (const id of [...this.#pending.keys()]) {
      const message = "Denied: the gateway is shutting down.";
      this.#resolve(id, { behavior: "deny", message }, "shutdown");
      void this.#shared?.ledger
        .settleOwn(id, { decision: "deny", message, resolvedBy: "shutdown" })
        .catch(() => {});
    }
  }

  /**
   * Settles a request this worker's agent waits on without a person (timeout, turn end): in
   * the database first when shared, where a person's answer that got there first wins.
   */
  async #settle(
    requestId: string,
    decision: PermissionDecision,
    resolvedBy: PermissionResolver,
  ): Promise<void> {
    const pending = this.#pending.get(requestId);
    if (!pending) return;
    const own: LedgerDecision = {
      decision: decision.behavior,
      message: decision.behavior === "deny" ? decision.message : null,
      resolvedBy,
    };
    const earlier = await this.#shared?.ledger.settleOwn(requestId, own).catch(() => null);
    if (earlier?.resolvedBy === "person") {
      this.#resolve(requestId, asDecision(earlier), "person");
      this.#remember(pending.info.channelId, requestId, earlier.decision);
      return;
    }
    this.#resolve(requestId, decision, resolvedBy);
  }

  #remember(channelId: string, requestId: string, verdict: PermissionVerdict): void {
    this.#decided.set(`${channelId}/${requestId}`, verdict);
    for (const key of this.#decided.keys()) {
      if (this.#decided.size <= REMEMBERED_DECISIONS) break;
      this.#decided.delete(key);
    }
  }

  #resolve(requestId: string, decision: PermissionDecision, resolvedBy: PermissionResolver): void {
    const pending = this.#pending.get(requestId);
    if (!pending) return;
    this.#pending.delete(requestId);
    const { channelId } = pending.info;
    const left = (this.#pendingCount.get(channelId) ?? 1) - 1;
    if (left > 0) this.#pendingCount.set(channelId, left);
    else {
      this.#pendingCount.delete(channelId);
      this.#toldFlood.delete(channelId);
    }
    clearTimeout(pending.timer);
    pending.resolve(decision);
    this.#bus.publish({
      type: "permission_resolved",
      requestId,
      decision: decision.behavior,
      resolvedBy,
      ...(decision.behavior === "deny" ? { message: decision.message } : {}),
      channelId: pending.info.channelId,
    });
  }
}
