import { describe, expect, it } from "vitest";
import {
  DEFAULT_MODEL,
  hasModelCredentials,
  MISSING_CREDENTIALS_ERROR,
  modelConfigFromEnv,
} from "../../src/model/model-config.js";
import { costUsd } from "../../src/model/pricing.js";
import { emptyUsage } from "../../src/model/types.js";

describe("modelConfigFromEnv", () => {
  it("needs credentials and points at the demo model when there are none", () => {
    const result = modelConfigFromEnv({ ANTHROPIC_API_KEY: " " }, {});
    expect(result).toEqual({ ok: false, error: MISSING_CREDENTIALS_ERROR });
    expect(MISSING_CREDENTIALS_ERROR).not.toContain("\n");
    expect(MISSING_CREDENTIALS_ERROR).toContain("ANTHROPIC_API_KEY");
    expect(MISSING_CREDENTIALS_ERROR).toContain("--model demo");
  });

  it("reads the key, endpoint, model and retries, with the flag winning", () => {
    const env = {
      ANTHROPIC_API_KEY: "sk-key",
      ANTHROPIC_AUTH_TOKEN: "token",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
      RUDDER_MODEL: "claude-haiku-4-5",
      RUDDER_MAX_RETRIES: "7",
    };
    expect(modelConfigFromEnv(env, {})).toEqual({
      ok: true,
      options: {
        model: "claude-haiku-4-5",
        apiKey: "sk-key",
        baseURL: "http://127.0.0.1:9",
        maxRetries: 7,
      },
    });
    const flagged = modelConfigFromEnv(env, { model: "claude-opus-5" });
    expect(flagged.ok && flagged.options.model).toBe("claude-opus-5");
  });

  it("falls back to the auth token, the default model and four retries", () => {
    expect(modelConfigFromEnv({ ANTHROPIC_AUTH_TOKEN: "token" }, {})).toEqual({
      ok: true,
      options: { model: DEFAULT_MODEL, authToken: "token", maxRetries: 4 },
    });
  });

  it("resolves Claude Code's model aliases and leaves full ids alone", () => {
    const env = { ANTHROPIC_API_KEY: "k" };
    const modelOf = (model: string) => {
      const config = modelConfigFromEnv(env, { model });
      return config.ok ? config.options.model : config.error;
    };
    expect(modelOf("sonnet")).toBe(DEFAULT_MODEL);
    expect(modelOf("opus")).toMatch(/^claude-opus-/);
    expect(modelOf("haiku")).toMatch(/^claude-haiku-/);
    expect(modelOf("claude-opus-4-5")).toBe("claude-opus-4-5");
  });

  it("says whether credentials are present", () => {
    expect(hasModelCredentials({ ANTHROPIC_AUTH_TOKEN: "t" })).toBe(true);
    expect(hasModelCredentials({ ANTHROPIC_API_KEY: "" })).toBe(false);
  });

  it("rejects a retry count that is not a whole number", () => {
    const result = modelConfigFromEnv({ ANTHROPIC_API_KEY: "k", RUDDER_MAX_RETRIES: "-1" }, {});
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/RUDDER_MAX_RETRIES/);
  });

  it("reads how long a silent stream is waited for, and refuses a bound that is not one", () => {
    const env = { ANTHROPIC_API_KEY: "k", RUDDER_STREAM_IDLE_TIMEOUT_MS: "250" };
    const read = modelConfigFromEnv(env, {});
    expect(read.ok && read.options.streamIdleTimeoutMs).toBe(250);
    for (const bad of ["0", "-5", "1.5", "soon"]) {
      const result = modelConfigFromEnv({ ...env, RUDDER_STREAM_IDLE_TIMEOUT_MS: bad }, {});
      expect(result).toEqual({
        ok: false,
        error: `RUDDER_STREAM_IDLE_TIMEOUT_MS must be a whole number of milliseconds above 0, got "${bad}"`,
      });
    }
  });
});

describe("costUsd", () => {
  const million = { ...emptyUsage(), input_tokens: 1_000_000, output_tokens: 1_000_000 };

  it("prices each family per million tokens, cache included", () => {
    expect(costUsd("claude-sonnet-4-5-20250929", million)).toBeCloseTo(18);
    expect(costUsd("claude-opus-4-1", million)).toBeCloseTo(90);
    expect(costUsd("claude-opus-4-5", million)).toBeCloseTo(30);
    expect(costUsd("claude-haiku-4-5", million)).toBeCloseTo(6);
    const cached = {
      ...emptyUsage(),
      cache_creation_input_tokens: 1_000_000,
      cache_read_input_tokens: 1_000_000,
    };
    expect(costUsd("claude-sonnet-5-5", cached)).toBeCloseTo(3.75 + 0.3);
  });

  it("matches what Claude Code reports for a Sonnet turn", () => {
    const usage = { ...emptyUsage(), input_tokens: 43652, output_tokens: 42 };
    expect(costUsd("claude-sonnet-4-5", usage)).toBeCloseTo(0.131586, 6);
  });

  it("is zero for unknown models and the demo", () => {
    expect(costUsd("demo", million)).toBe(0);
    expect(costUsd("some-other-model", million)).toBe(0);
  });
});
