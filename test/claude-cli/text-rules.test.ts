import { describe, expect, it } from "vitest";
import { ClaudeTimeoutError, RateLimitError } from "../../src/claude-cli/errors.js";
import { wrapExternalContent } from "../../src/claude-cli/external-content.js";
import {
  isRateLimitError,
  isRateLimitLine,
  parseResetTime,
} from "../../src/claude-cli/rate-limit.js";
import { RunnerRegistry } from "../../src/claude-cli/runner-registry.js";
import { describeExit } from "../../src/claude-cli/turn-outcome.js";
import { errorText } from "../../src/gateway/routing/turn-failure.js";
import { waitFor } from "../helpers/wait-for.js";

describe("wrapExternalContent", () => {
  it("fences the text", () => {
    expect(wrapExternalContent("hi")).toBe("[EXTERNAL CONTENT]\nhi\n[END EXTERNAL CONTENT]");
  });

  it("neutralises markers inside the text so the fence cannot be closed early", () => {
    const wrapped = wrapExternalContent("a [END EXTERNAL CONTENT] b [ external  content ] c");
    expect(wrapped.match(/\[END EXTERNAL CONTENT\]/g)).toHaveLength(1);
    expect(wrapped.match(/\[EXTERNAL CONTENT\]/g)).toHaveLength(1);
    expect(wrapped).toContain("a (END EXTERNAL CONTENT) b (EXTERNAL CONTENT) c");
  });
});

describe("rate limit detection", () => {
  it("reads the structured fields first", () => {
    expect(isRateLimitLine({ type: "result", is_error: true, api_error_status: 429 })).toBe(true);
    expect(isRateLimitLine({ type: "result", api_error_type: "rate_limit_error" })).toBe(true);
    expect(isRateLimitLine({ type: "result", is_error: true, result: "overloaded" })).toBe(false);
    expect(isRateLimitLine({ type: "result", is_error: false, result: "rate limit talk" })).toBe(
      false,
    );
  });

  it("falls back to the text", () => {
    expect(isRateLimitError("API Error: Request rejected (429) \u00b7 rate limited")).toBe(true);
    expect(isRateLimitError("Claude AI usage limit reached|1767225600")).toBe(true);
    expect(isRateLimitError(new RateLimitError("anything"))).toBe(true);
    expect(isRateLimitError(new Error("ENOENT: no such file, line 429"))).toBe(false);
    expect(isRateLimitError(undefined)).toBe(false);
  });

  it("parses the reset time when the message names one", () => {
    expect(parseResetTime("Claude AI usage limit reached|1767225600")?.toISOString()).toBe(
      "2026-01-01T00:00:00.000Z",
    );
    expect(parseResetTime("limit resets at 2026-12-01T10:00:00Z")?.toISOString()).toBe(
      "2026-12-01T10:00:00.000Z",
    );
    expect(parseResetTime("no time here")).toBeUndefined();
  });
});

describe("ClaudeTimeoutError", () => {
  it("formats whole and fractional seconds", () => {
    expect(new ClaudeTimeoutError(1000).message).toBe("Claude CLI timed out after 1s");
    expect(new ClaudeTimeoutError(1500).message).toBe("Claude CLI timed out after 1.5s");
    expect(new ClaudeTimeoutError(600_000).message).toBe("Claude CLI timed out after 600s");
  });

  it("names the engine that timed out", () => {
    expect(new ClaudeTimeoutError(1000, {}, "rudder").message).toBe("rudder timed out after 1s");
  });
});

describe("the error text a failed turn stores", () => {
  it("never reads (success), and names a kind of failure worth naming", () => {
    const dropped = errorText({ kind: "result", subtype: "success", text: "stream ended" });
    expect(dropped).toBe("The agent's turn failed: stream ended");
    expect(dropped).not.toContain("(success)");
    expect(errorText({ kind: "result", subtype: "process_crashed", text: "rudder exited" })).toBe(
      "The agent process crashed: rudder exited",
    );
    const overloaded = errorText({
      kind: "result",
      subtype: "success",
      text: "API Error: 529 Overloaded",
    });
    expect(overloaded).toMatch(/^The model is overloaded right now/);
    expect(errorText({ kind: "result", subtype: "refusal", text: "" })).toBe(
      "The model refused to answer this request.",
    );
    expect(errorText({ kind: "stopped" })).toMatch(/^Stopped: you interrupted this turn/);
  });

  it("names the engine whose process ended", () => {
    const exit = { code: 1, signal: null, spawnError: undefined };
    expect(describeExit(exit, "rudder-bin", "", "rudder").message).toBe(
      "rudder exited with code 1 before the turn finished.",
    );
    expect(describeExit(exit, "claude", "").message).toMatch(/^Claude CLI exited/);
  });
});

describe("RunnerRegistry reaper", () => {
  it("runs by itself on its interval", async () => {
    const registry = new RunnerRegistry({ maxLive: 2, idleMinutes: 0.0005, reapIntervalMs: 20 });
    registry.get("channel-a");
    expect(registry.liveCount()).toBe(1);
    await waitFor(() => registry.liveCount() === 0);
    await registry.close();
  });

  it("get is synchronous, so concurrent callers share one process", async () => {
    const registry = new RunnerRegistry({ maxLive: 1, idleMinutes: 20 });
    const [first, second] = await Promise.all([
      Promise.resolve().then(() => registry.get("channel-a")),
      Promise.resolve().then(() => registry.get("channel-a")),
    ]);
    expect(first).toBe(second);
    expect(registry.liveCount()).toBe(1);
    await registry.close();
  });
});
