import type { AnthropicModelOptions } from "./anthropic-model.js";
import { DEFAULT_MAX_RETRIES, parseMaxRetries } from "./retry-policy.js";

/** The newest Sonnet the SDK knows; `claude-sonnet-4-5` reaches end of life on 2026-11-30. */
export const DEFAULT_MODEL = "claude-sonnet-5-5";

/**
 * Claude Code's model aliases, so `--model opus` means the same in both. A
 * full model id passes through unchanged.
 */
const MODEL_ALIASES: Record<string, string> = {
  default: DEFAULT_MODEL,
  sonnet: DEFAULT_MODEL,
  opus: "claude-opus-5-5",
  haiku: "claude-haiku-5-5",
};

export function resolveModelAlias(model: string): string {
  return MODEL_ALIASES[model] ?? model;
}

export const MISSING_CREDENTIALS_ERROR =
  "no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), " +
  "or try the offline demo with --model demo";

export type ModelConfigResult =
  | { ok: true; options: AnthropicModelOptions }
  | { ok: false; error: string };

function value(env: Record<string, string | undefined>, name: string): string | undefined {
  const found = env[name]?.trim();
  return found === undefined || found === "" ? undefined : found;
}

/** The model's id: `flags.model`, else `RUDDER_MODEL`, else `ANTHROPIC_MODEL`, else the default. */
export function modelNameFromEnv(
  env: Record<string, string | undefined>,
  flags: { model?: string },
): string {
  return resolveModelAlias(
    flags.model?.trim() ||
      value(env, "RUDDER_MODEL") ||
      value(env, "ANTHROPIC_MODEL") ||
      DEFAULT_MODEL,
  );
}

/**
 * Model options from the environment as Claude Code users know it:
 * `ANTHROPIC_API_KEY` (wins) or `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_BASE_URL`,
 * the model from `flags.model`, else `RUDDER_MODEL`, else `ANTHROPIC_MODEL`,
 * `RUDDER_MAX_RETRIES` and `RUDDER_STREAM_IDLE_TIMEOUT_MS`. Problems come back as a one-line error for the user.
 */
export function modelConfigFromEnv(
  env: Record<string, string | undefined>,
  flags: { model?: string },
): ModelConfigResult {
  const apiKey = value(env, "ANTHROPIC_API_KEY");
  const authToken = value(env, "ANTHROPIC_AUTH_TOKEN");
  if (apiKey === undefined && authToken === undefined) {
    return { ok: false, error: MISSING_CREDENTIALS_ERROR };
  }
  const retriesText = value(env, "RUDDER_MAX_RETRIES");
  const maxRetries = retriesText === undefined ? DEFAULT_MAX_RETRIES : parseMaxRetries(retriesText);
  if (maxRetries === undefined) {
    return {
      ok: false,
      error: `RUDDER_MAX_RETRIES must be a whole number of retries (0 or more), got "${retriesText}"`,
    };
  }
  const idleText = value(env, "RUDDER_STREAM_IDLE_TIMEOUT_MS");
  const idleMs = idleText === undefined ? undefined : Number(idleText);
  if (idleMs !== undefined && !(Number.isInteger(idleMs) && idleMs > 0)) {
    return {
      ok: false,
      error: `RUDDER_STREAM_IDLE_TIMEOUT_MS must be a whole number of milliseconds above 0, got "${idleText}"`,
    };
  }
  const options: AnthropicModelOptions = { model: modelNameFromEnv(env, flags), maxRetries };
  if (idleMs !== undefined) options.streamIdleTimeoutMs = idleMs;
  if (apiKey !== undefined) options.apiKey = apiKey;
  else if (authToken !== undefined) options.authToken = authToken;
  const baseURL = value(env, "ANTHROPIC_BASE_URL");
  if (baseURL !== undefined) options.baseURL = baseURL;
  return { ok: true, options };
}

/** True when the environment names credentials for the Messages API. */
export function hasModelCredentials(env: Record<string, string | undefined>): boolean {
  return (
    value(env, "ANTHROPIC_API_KEY") !== undefined ||
    value(env, "ANTHROPIC_AUTH_TOKEN") !== undefined
  );
}
