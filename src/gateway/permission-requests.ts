import { randomUUID } from "node:crypto";
import type { PermissionDecision, PermissionRequest } from "../claude-cli/permission-request.js";
import type { EventBus } from "./event-bus.js";
import type { PermissionRequestInfo, PermissionResolver, PermissionVerdict } from "./events.js";

export const DEFAULT_PERMISSION_TIMEOUT_MS = 5 * 60_000;

/** Resolved requests remembered so a second decision is told apart from an unknown id. */
const REMEMBERED_DECISIONS = 1000;

/** What `decide` did: the request it settled, or why it could not. */
export type DecideOutcome =
  | { status: "decided"; request: PermissionRequestInfo & { decision: PermissionVerdict } }
  | { status: "unknown" }
  | { status: "already_decided"; decision: PermissionVerdict };

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

/**
 * The tool calls agents asked a person about. `ask` is an agent process's
 * permission handler: it publishes `permission_request` and waits until a
 * person decides (`decide`), the timeout denies it, or its turn or process
 * ends (`expire`); each way publishes `permission_resolved`. Never rejects.
 */
export class PermissionRequests {
  readonly #bus: EventBus;
  readonly #timeoutMs: number;
  readonly #pending = new Map<string, Pending>();
  /** Request id to what a person decided, oldest first. */
  readonly #decided = new Map<string, PermissionVerdict>();
  #closed = false;

  constructor(options: { bus: EventBus; timeoutMs?: number }) {
    this.#bus = options.bus;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS;
  }

  ask(channelId: string, request: PermissionRequest): Promise<PermissionDecision> {
    if (this.#closed) {
      return Promise.resolve({
        behavior: "deny",
        message: "Denied: the gateway is shutting down.",
      });
    }
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
        this.#resolve(info.id, { behavior: "deny", message }, "timeout");
      }, this.#timeoutMs);
      timer.unref();
      this.#pending.set(info.id, { info, resolve, timer });
      this.#bus.publish({ type: "permission_request", request: info, channelId });
    });
  }

  /** Pending requests of a channel, oldest first. */
  list(channelId: string): PermissionRequestInfo[] {
    return [...this.#pending.values()]
      .map((pending) => pending.info)
      .filter((info) => info.channelId === channelId);
  }

  /** A person's decision; a denial's `message` reaches the agent. */
  decide(
    channelId: string,
    requestId: string,
    verdict: PermissionVerdict,
    message?: string,
  ): DecideOutcome {
    const pending = this.#pending.get(requestId);
    if (!pending || pending.info.channelId !== channelId) {
      const decision = this.#decided.get(`${channelId}/${requestId}`);
      return decision ? { status: "already_decided", decision } : { status: "unknown" };
    }
    const denial = message?.trim() || "Denied by the person watching this channel.";
    this.#resolve(
      requestId,
      verdict === "allow" ? { behavior: "allow" } : { behavior: "deny", message: denial },
      "person",
    );
    this.#decided.set(`${channelId}/${requestId}`, verdict);
    for (const key of this.#decided.keys()) {
      if (this.#decided.size <= REMEMBERED_DECISIONS) break;
      this.#decided.delete(key);
    }
    return { status: "decided", request: { ...pending.info, decision: verdict } };
  }

  /** Denies what a channel's agent still waits on: its turn ended or its process stopped. */
  expire(channelId: string, reason: string): void {
    for (const pending of [...this.#pending.values()]) {
      if (pending.info.channelId !== channelId) continue;
      this.#resolve(
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
      this.#resolve(
        id,
        { behavior: "deny", message: "Denied: the gateway is shutting down." },
        "shutdown",
      );
    }
  }

  #resolve(requestId: string, decision: PermissionDecision, resolvedBy: PermissionResolver): void {
    const pending = this.#pending.get(requestId);
    if (!pending) return;
    this.#pending.delete(requestId);
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
