/**
 * What a failed Web API call means for the reply ledger: a 429 waits its Retry-After, Slack's
 * own trouble and the network are tried again, a refused token stops the source, blocks or
 * text Slack will not take go again as plain text, and the rest (no such channel, not in it)
 * is refused for good.
 */
import type { PlatformFailure } from "../kit/chat-platform.js";

const BAD_TOKEN = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
]);
const MARKUP = new Set(["invalid_blocks", "invalid_blocks_format", "msg_too_long", "no_text"]);
const TRANSIENT = new Set([
  "ratelimited",
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
  "team_added_to_org",
]);

interface SlackErrorShape {
  code?: string;
  retryAfter?: number;
  statusCode?: number;
  data?: { error?: string };
}

/** Slack's error name for a platform error (`channel_not_found`), else undefined. */
export function slackErrorName(error: unknown): string | undefined {
  const shaped = error as SlackErrorShape | undefined;
  return shaped?.code === "slack_webapi_platform_error" ? shaped.data?.error : undefined;
}

export function slackFailure(error: unknown): PlatformFailure {
  const shaped = (error ?? {}) as SlackErrorShape;
  switch (shaped.code) {
    case "slack_webapi_rate_limited_error":
      return { kind: "transient", retryAfterMs: (shaped.retryAfter ?? 1) * 1000 };
    case "slack_webapi_http_error":
      return (shaped.statusCode ?? 500) >= 500 ? { kind: "transient" } : { kind: "refused" };
    case "slack_webapi_platform_error": {
      const name = shaped.data?.error ?? "";
      if (BAD_TOKEN.has(name)) return { kind: "bad_token" };
      if (MARKUP.has(name)) return { kind: "markup" };
      if (TRANSIENT.has(name)) return { kind: "transient" };
      return { kind: "refused" };
    }
    default:
      return { kind: "transient" };
  }
}
