import { randomUUID } from "node:crypto";
import type { ClaudeChild } from "./claude-child.js";
import {
  decidePermission,
  type PermissionHandler,
  parsePermissionRequest,
  unsupportedControlResponse,
} from "./permission-request.js";
import { isRecord } from "./turn-result.js";

const INTERRUPT_WAIT_MS = 5000;

/** Whether the child may wake itself now: a refusal's reason, or undefined to let it. */
export type WakeHandler = () => Promise<string | undefined>;

/** The answer to a `wake` request: allowed without a handler or when the handler fails. */
async function decideWake(
  requestId: string,
  handler: WakeHandler | undefined,
): Promise<Record<string, unknown>> {
  const refusal = await handler?.().catch(() => undefined);
  const response =
    refusal === undefined ? { behavior: "allow" } : { behavior: "deny", message: refusal };
  return {
    type: "control_response",
    response: { subtype: "success", request_id: requestId, response },
  };
}

/**
 * The control side of stream-json: requests from the CLI (every one is answered, or the turn
 * hangs) and requests to it (interrupt) matched to their responses by `request_id`.
 */
export class ControlChannel {
  readonly #waiters = new Map<string, () => void>();
  readonly #permissionHandler: () => PermissionHandler | undefined;
  readonly #wakeHandler: () => WakeHandler | undefined;

  constructor(
    permissionHandler: () => PermissionHandler | undefined,
    wakeHandler: () => WakeHandler | undefined = () => undefined,
  ) {
    this.#permissionHandler = permissionHandler;
    this.#wakeHandler = wakeHandler;
  }

  /**
   * Answers a `control_request` line: `can_use_tool` through the permission handler, `wake`
   * (a rudder child run with `--ask-before-waking`) through the wake handler, others refused.
   */
  answerRequest(child: ClaudeChild, line: Record<string, unknown>): void {
    if (typeof line.request_id !== "string") return;
    const permission = parsePermissionRequest(line);
    const wake = isRecord(line.request) && line.request.subtype === "wake";
    const answer = permission
      ? decidePermission(permission, this.#permissionHandler())
      : wake
        ? decideWake(line.request_id, this.#wakeHandler())
        : Promise.resolve(
            unsupportedControlResponse(
              line.request_id,
              isRecord(line.request) && line.request.subtype,
            ),
          );
    void answer.then((response) => child.write(response)).catch(() => {});
  }

  /** Settles the waiter of a `control_response` line. */
  acceptResponse(line: Record<string, unknown>): void {
    const response = isRecord(line.response) ? line.response : {};
    if (typeof response.request_id === "string") this.#waiters.get(response.request_id)?.();
  }

  /** Sends an interrupt; resolves when acknowledged, after 5 s, or at once if the child is dead. */
  async interrupt(child: ClaudeChild): Promise<void> {
    const requestId = randomUUID();
    const acknowledged = new Promise<void>((resolve) => {
      this.#waiters.set(requestId, resolve);
      setTimeout(resolve, INTERRUPT_WAIT_MS).unref();
    });
    try {
      await child.write({
        type: "control_request",
        request_id: requestId,
        request: { subtype: "interrupt" },
      });
      await acknowledged;
    } catch {
      // A dead child has nothing left to interrupt.
    } finally {
      this.#waiters.delete(requestId);
    }
  }
}
