import type { AgentTurnResult, TurnFailure } from "../agents/agent-process.js";
import type { MessageRecord } from "../store/store.js";
import type { RetryTimers } from "./retry-timers.js";
import type { Settlements } from "./settlements.js";
import { errorText, fallbackText, matchPendingSteers } from "./turn-failure.js";

/**
 * How the router writes a turn's end for the messages it covered: answered with the reply,
 * failed with the error, or deferred past a rate limit (with the retry armed).
 */
export class TurnSettlement {
  readonly #settlements: Settlements;
  readonly #retries: RetryTimers;
  readonly #retryDelayMs: number;

  constructor(settlements: Settlements, retries: RetryTimers, retryDelayMs: number) {
    this.#settlements = settlements;
    this.#retries = retries;
    this.#retryDelayMs = retryDelayMs;
  }

  /**
   * Settles a turn started by `covered[0]` and steered by the rest; `pendingSteers` are the
   * texts the process says it never read. Returns the steered messages to dispatch again.
   */
  async turn(
    covered: MessageRecord[],
    steered: MessageRecord[],
    result: AgentTurnResult | undefined,
    failure: TurnFailure | undefined,
    pendingSteers: () => string[],
    /** Stopped on request (true), or by a budget (what it says of the limit). */
    stopped: boolean | string = false,
  ): Promise<MessageRecord[]> {
    if (result && !result.isError) {
      await this.result(covered, result);
      return [];
    }
    const pending = pendingSteers();
    if (failure?.kind === "rate_limit") {
      await this.failure(covered, failure);
      return [];
    }
    const redispatch = matchPendingSteers(steered, pending);
    const failed = covered.filter((message) => !redispatch.includes(message));
    const text =
      typeof stopped === "string"
        ? stopped
        : stopped
          ? errorText({ kind: "stopped" })
          : result
            ? errorText({ kind: "result", subtype: result.subtype ?? "error", text: result.result })
            : errorText(failure ?? { kind: "crash", message: "unknown failure" });
    await this.#settlements.settle(failed, "failed", { kind: "error", text }, { result });
    return redispatch;
  }

  /** A result answers the messages, or fails them when it is an error. */
  async result(messages: MessageRecord[], result: AgentTurnResult): Promise<void> {
    if (result.isError) {
      const text = errorText({
        kind: "result",
        subtype: result.subtype ?? "error",
        text: result.result,
      });
      await this.#settlements.settle(messages, "failed", { kind: "error", text }, { result });
    } else {
      await this.#settlements.settle(
        messages,
        "answered",
        { kind: "reply", text: result.result },
        { result },
      );
    }
  }

  /** A thrown failure: a rate limit defers the messages, anything else fails them. */
  async failure(messages: MessageRecord[], failure: TurnFailure): Promise<void> {
    if (failure.kind === "rate_limit") {
      await this.defer(messages, failure.resetAt ?? new Date(Date.now() + this.#retryDelayMs));
    } else {
      await this.#settlements.settle(messages, "failed", {
        kind: "error",
        text: errorText(failure),
      });
    }
  }

  /**
   * Answers with the fallback text (a rate limit's, or `heldText`: a budget's) and arms the
   * channel's retry for `retryAt`.
   */
  async defer(messages: MessageRecord[], retryAt: Date, heldText?: string): Promise<void> {
    const first = messages[0];
    if (first === undefined) return;
    this.#retries.arm(first.channelId, retryAt.getTime(), heldText);
    await this.#settlements.settle(
      messages,
      "deferred",
      { kind: "fallback", text: heldText ?? fallbackText(retryAt) },
      { retryAt },
    );
  }
}
