import { describe, expect, it } from "vitest";
import { rateLimitResetAt } from "../../src/model/model-failure.js";
import {
  backoffDelayMs,
  parseMaxRetries,
  retryDelayMs,
  serverRetryDelayMs,
  waitUnlessAborted,
} from "../../src/model/retry-policy.js";

function headers(values: Record<string, string>) {
  return (name: string) => values[name];
}

describe("retry policy", () => {
  it("reads retry-after-ms, retry-after seconds and dates", () => {
    const now = Date.parse("2026-11-30T10:00:00Z");
    expect(serverRetryDelayMs(headers({ "retry-after-ms": "250" }), now)).toBe(250);
    expect(serverRetryDelayMs(headers({ "retry-after": "3" }), now)).toBe(3000);
    expect(
      serverRetryDelayMs(headers({ "retry-after": "Mon, 30 Nov 2026 10:00:05 GMT" }), now),
    ).toBe(5000);
    expect(serverRetryDelayMs(headers({}), now)).toBeUndefined();
    expect(serverRetryDelayMs(headers({ "retry-after": "soon" }), now)).toBeUndefined();
  });

  it("backs off exponentially with jitter, capped", () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const full = Math.min(500 * 2 ** (attempt - 1), 16_000);
      const delay = backoffDelayMs(attempt);
      expect(delay).toBeGreaterThanOrEqual(full * 0.75 - 1);
      expect(delay).toBeLessThanOrEqual(full);
    }
  });

  it("follows the server within the cap and gives up beyond it", () => {
    expect(retryDelayMs(1, headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryDelayMs(1, headers({ "retry-after": "61" }))).toBeUndefined();
    expect(retryDelayMs(1, headers({ "retry-after": "61" }), { maxDelayMs: 120_000 })).toBe(61_000);
    expect(retryDelayMs(3, undefined, { baseDelayMs: 10 })).toBeLessThanOrEqual(40);
  });

  it("finds when a rate limit resets", () => {
    const now = 1_000_000;
    const exhausted = headers({
      "anthropic-ratelimit-requests-reset": "2026-11-30T10:00:00Z",
      "anthropic-ratelimit-requests-remaining": "5",
      "anthropic-ratelimit-tokens-reset": "2026-11-30T10:01:00Z",
      "anthropic-ratelimit-tokens-remaining": "0",
    });
    expect(rateLimitResetAt(exhausted, now)).toBe(Date.parse("2026-11-30T10:01:00Z"));
    expect(rateLimitResetAt(headers({ "retry-after": "30" }), now)).toBe(now + 30_000);
    expect(
      rateLimitResetAt(headers({ "anthropic-ratelimit-unified-reset": "1800000000" }), now),
    ).toBe(1_800_000_000_000);
    expect(rateLimitResetAt(headers({}), now)).toBeUndefined();
  });

  it("waits unless aborted", async () => {
    const controller = new AbortController();
    expect(await waitUnlessAborted(1, controller.signal)).toBe(true);
    const waiting = waitUnlessAborted(60_000, controller.signal);
    controller.abort();
    expect(await waiting).toBe(false);
    expect(await waitUnlessAborted(1, controller.signal)).toBe(false);
  });

  it("parses retry counts", () => {
    expect(parseMaxRetries("0")).toBe(0);
    expect(parseMaxRetries(" 12 ")).toBe(12);
    expect(parseMaxRetries("1.5")).toBeUndefined();
    expect(parseMaxRetries(undefined)).toBeUndefined();
  });
});
