import type { Confirm, ConfirmRequest } from "../agent/tool-dispatch.js";
import type { HostRequests } from "./host-requests.js";

export interface PermissionAnswer {
  allowed: boolean;
  /** The host's `message` for a denial, or its error. */
  message: string | undefined;
  updatedInput: Record<string, unknown> | undefined;
  /** A denial that also asks to stop the turn (`interrupt: true`). */
  interrupt: boolean;
}

const DENIED_UNANSWERED: PermissionAnswer = {
  allowed: false,
  message: "the host did not answer",
  updatedInput: undefined,
  interrupt: false,
};

/**
 * Asks the host over stdout (`control_request` `can_use_tool`, as Claude Code does with
 * `--permission-prompt-tool stdio`) through `requests`, which matches the host's
 * `control_response`. A turn that aborts, or input that ends, settles what is pending
 * as a denial.
 */
export class PermissionPrompt {
  readonly #requests: HostRequests;

  constructor(requests: HostRequests) {
    this.#requests = requests;
  }

  async ask(
    request: ConfirmRequest & { toolUseId?: string },
    signal: AbortSignal,
  ): Promise<PermissionAnswer> {
    const answer = await this.#requests.send(
      {
        subtype: "can_use_tool",
        tool_name: request.toolName,
        display_name: request.toolName,
        input: request.input,
        description: request.reason,
        permission_suggestions: [],
        ...(request.toolUseId === undefined ? {} : { tool_use_id: request.toolUseId }),
      },
      signal,
    );
    if (!answer.ok) {
      const message =
        answer.reason === "cancelled"
          ? "the turn was interrupted"
          : answer.reason === "closed"
            ? DENIED_UNANSWERED.message
            : answer.error;
      return { ...DENIED_UNANSWERED, message };
    }
    const { response } = answer;
    const allowed = response.behavior === "allow";
    const updated = response.updatedInput;
    return {
      allowed,
      message: typeof response.message === "string" ? response.message : undefined,
      updatedInput:
        typeof updated === "object" && updated !== null && !Array.isArray(updated)
          ? (updated as Record<string, unknown>)
          : undefined,
      interrupt: !allowed && response.interrupt === true,
    };
  }

  /**
   * The kernel's `confirm` over `ask`: names the tool call `toolUseId()` reports, stops the
   * turn (`interrupt`) when the host's denial asks to, and passes on the host's changed input
   * (an allow) or message for the model (a denial).
   */
  confirm(toolUseId: () => string | undefined, interrupt: (reason: string) => void): Confirm {
    return async (request, signal) => {
      const id = toolUseId();
      const answer = await this.ask(
        id === undefined ? request : { ...request, toolUseId: id },
        signal,
      );
      if (answer.interrupt) interrupt("interrupted by the host's permission answer");
      return {
        allowed: answer.allowed,
        ...(answer.message ? { message: answer.message } : {}),
        ...(answer.allowed && answer.updatedInput ? { updatedInput: answer.updatedInput } : {}),
      };
    };
  }
}
