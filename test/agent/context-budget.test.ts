import { describe, expect, it } from "vitest";
import { contextBudget, contextBudgetFrom } from "../../src/agent/context-budget.js";
import { contextOverflowOf } from "../../src/model/context-overflow.js";
import { contextWindowFor, parseContextWindow } from "../../src/model/context-window.js";

describe("context windows and budgets", () => {
  it("knows the windows Claude Code reports: 1M for the fifth generation, 200k before", () => {
    expect(contextWindowFor("claude-sonnet-5-5")).toBe(1_000_000);
    expect(contextWindowFor("claude-opus-5-5")).toBe(1_000_000);
    expect(contextWindowFor("claude-sonnet-4-5")).toBe(200_000);
    expect(contextWindowFor("some-local-model")).toBe(200_000);
  });

  it("scales every budget with the window, leaving room for the reply and the summary", () => {
    for (const window of [16_000, 50_000, 200_000]) {
      const budget = contextBudget(window, 32_000);
      expect(budget.threshold + budget.summaryMaxTokens).toBeLessThan(window);
      expect(budget.threshold / window).toBeCloseTo(
        contextBudget(200_000, 32_000).threshold / 200_000,
        1,
      );
      expect(budget.keepTokens).toBe(window / 10);
    }
    expect(contextBudget(200_000, 32_000).threshold).toBe(167_000);
  });

  it("reads Claude Code's switches and rudder's window override", () => {
    const model = "claude-sonnet-4-5";
    expect(contextBudgetFrom(model, { RUDDER_CONTEXT_WINDOW: "16000" })).toMatchObject({
      window: 16_000,
      auto: true,
    });
    expect(contextBudgetFrom(model, { RUDDER_CONTEXT_WINDOW: "50k" })).toMatchObject({
      window: 50_000,
    });
    expect(contextBudgetFrom(model, { DISABLE_AUTO_COMPACT: "1" })).toMatchObject({ auto: false });
    expect(contextBudgetFrom(model, {}, { autoCompactEnabled: false })).toMatchObject({
      auto: false,
    });
    expect(contextBudgetFrom(model, {}, { autoCompactWindow: 100_000 })).toMatchObject({
      window: 100_000,
    });
    expect(contextBudgetFrom(model, { CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: "50" })).toMatchObject({
      threshold: 100_000,
    });
    // The override brings compaction earlier, never later (as in Claude Code).
    expect(contextBudgetFrom(model, { CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: "99" })).toMatchObject({
      threshold: 167_000,
    });
    expect(contextBudgetFrom(model, { RUDDER_CONTEXT_WINDOW: "lots" })).toEqual({
      error: 'RUDDER_CONTEXT_WINDOW must be a number of tokens, got "lots"',
    });
    expect(contextBudgetFrom(model, { CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: "150" })).toHaveProperty(
      "error",
    );
    expect(parseContextWindow("200_000")).toBe(200_000);
    expect(parseContextWindow("0")).toBeUndefined();
  });

  it("recognises the API's context-length refusals and nothing else", () => {
    expect(
      contextOverflowOf({
        subtype: "invalid_request",
        status: 400,
        message:
          "API Error: Request rejected (400) invalid_request_error: prompt is too long: 215000 tokens > 200000 maximum",
      }),
    ).toEqual({ tokens: 215_000, maximum: 200_000 });
    expect(
      contextOverflowOf({
        subtype: "invalid_request",
        status: 400,
        message: "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000",
      }),
    ).toBeDefined();
    expect(
      contextOverflowOf({
        subtype: "invalid_request",
        status: 400,
        message: "messages: Field required",
      }),
    ).toBeUndefined();
    expect(
      contextOverflowOf({ subtype: "rate_limit", status: 429, message: "prompt is too long" }),
    ).toBeUndefined();
  });
});
