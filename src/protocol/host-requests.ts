import { randomUUID } from "../agent/random-uuid.js";
import type { OutputLine } from "./output-lines.js";

/** The host's answer to a control request rudder sent, or why none came. */
export type HostAnswer =
  | { ok: true; response: Record<string, unknown> }
  | { ok: false; reason: "error" | "cancelled" | "closed"; error: string };

const CLOSED: HostAnswer = { ok: false, reason: "closed", error: "the host's input has ended" };
const CANCELLED: HostAnswer = { ok: false, reason: "cancelled", error: "cancelled" };

/**
 * Control requests rudder sends to the host (`can_use_tool`, `hook_callback`), matched with
 * the host's `control_response` by request id. An abort sends
 * `control_cancel_request` (the Agent SDK then aborts its callback) and
 * settles the request; so does the end of input. Never rejects.
 */
export class HostRequests {
  readonly #write: (line: OutputLine) => void;
  readonly #pending = new Map<string, (answer: HostAnswer) => void>();
  #closed = false;

  constructor(write: (line: OutputLine) => void) {
    this.#write = write;
  }

  send(
    request: Record<string, unknown> & { subtype: string },
    signal: AbortSignal,
  ): Promise<HostAnswer> {
    if (this.#closed) return Promise.resolve(CLOSED);
    if (signal.aborted) return Promise.resolve(CANCELLED);
    const requestId = randomUUID();
    return new Promise<HostAnswer>((resolve) => {
      const onAbort = (): void => {
        if (!this.#pending.delete(requestId)) return;
        this.#write({ type: "control_cancel_request", request_id: requestId });
        resolve(CANCELLED);
      };
      this.#pending.set(requestId, (answer) => {
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
      });
      signal.addEventListener("abort", onAbort, { once: true });
      this.#write({ type: "control_request", request_id: requestId, request });
    });
  }

  /** Settles the request a `control_response` answers; false when none waits for it. */
  answer(
    requestId: string,
    subtype: string,
    response: Record<string, unknown>,
    error: string | undefined,
  ): boolean {
    const settle = this.#pending.get(requestId);
    if (settle === undefined) return false;
    this.#pending.delete(requestId);
    settle(
      subtype === "success"
        ? { ok: true, response }
        : { ok: false, reason: "error", error: error ?? "the host answered with an error" },
    );
    return true;
  }

  /** Nobody can answer any more (stdin ended): settle what waits and what comes. */
  close(): void {
    this.#closed = true;
    for (const settle of this.#pending.values()) settle(CLOSED);
    this.#pending.clear();
  }
}
