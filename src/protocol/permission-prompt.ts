import { randomUUID } from "node:crypto";
import type { ConfirmRequest } from "../agent/tool-dispatch.js";
import type { OutputLine } from "./output-lines.js";

export interface PermissionAnswer {
  allowed: boolean;
  /** The host's `message` for a denial, or its error. */
  message: string | undefined;
  updatedInput: Record<string, unknown> | undefined;
  /** A denial that also asks to stop the turn (`interrupt: true`). */
  interrupt: boolean;
}

interface Pending {
  resolve: (answer: PermissionAnswer) => void;
}

const DENIED_UNANSWERED: PermissionAnswer = {
  allowed: false,
  message: "the host did not answer",
  updatedInput: undefined,
  interrupt: false,
};

/**
 * Asks the host over stdout (`control_request` `can_use_tool`, as Claude Code does with
 * `--permission-prompt-tool stdio`) and matches its `control_response` by request id.
 * A turn that aborts, or input that ends, settles what is pending as a denial.
 */
export class PermissionPrompt {
  readonly #write: (line: OutputLine) => void;
  readonly #pending = new Map<string, Pending>();
  #closed = false;

  constructor(write: (line: OutputLine) => void) {
    this.#write = write;
  }

  ask(
    request: ConfirmRequest & { toolUseId?: string },
    signal: AbortSignal,
  ): Promise<PermissionAnswer> {
    if (this.#closed || signal.aborted) return Promise.resolve(DENIED_UNANSWERED);
    const requestId = randomUUID();
    return new Promise<PermissionAnswer>((resolve) => {
      const onAbort = (): void => {
        if (!this.#pending.delete(requestId)) return;
        this.#write({ type: "control_cancel_request", request_id: requestId });
        resolve({ ...DENIED_UNANSWERED, message: "the turn was interrupted" });
      };
      this.#pending.set(requestId, {
        resolve: (answer) => {
          signal.removeEventListener("abort", onAbort);
          resolve(answer);
        },
      });
      signal.addEventListener("abort", onAbort, { once: true });
      this.#write({
        type: "control_request",
        request_id: requestId,
        request: {
          subtype: "can_use_tool",
          tool_name: request.toolName,
          display_name: request.toolName,
          input: request.input,
          description: request.reason,
          permission_suggestions: [],
          ...(request.toolUseId === undefined ? {} : { tool_use_id: request.toolUseId }),
        },
      });
    });
  }

  /** Settles the request a host's `control_response` answers; false when none waits. */
  answer(
    requestId: string,
    subtype: string,
    response: Record<string, unknown>,
    error: string | undefined,
  ): boolean {
    const pending = this.#pending.get(requestId);
    if (pending === undefined) return false;
    this.#pending.delete(requestId);
    if (subtype !== "success") {
      pending.resolve({
        ...DENIED_UNANSWERED,
        message: error ?? "the host answered with an error",
      });
      return true;
    }
    const allowed = response.behavior === "allow";
    const updated = response.updatedInput;
    pending.resolve({
      allowed,
      message: typeof response.message === "string" ? response.message : undefined,
      updatedInput:
        typeof updated === "object" && updated !== null && !Array.isArray(updated)
          ? (updated as Record<string, unknown>)
          : undefined,
      interrupt: !allowed && response.interrupt === true,
    });
    return true;
  }

  /** Nobody can answer any more (stdin ended): deny what waits and what comes. */
  close(): void {
    this.#closed = true;
    for (const pending of this.#pending.values()) pending.resolve(DENIED_UNANSWERED);
    this.#pending.clear();
  }
}
