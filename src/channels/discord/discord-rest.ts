/**
 * Discord's REST API through discord.js's client (`REST`), loaded on first use, and what its
 * failures mean for the reply ledger. Rate limits are not waited out inside the client: a 429,
 * or a request its bucket would hold back, rejects at once with Discord's `retry_after`, which
 * the ledger waits (so a slow chat gets the newest edit, not a backlog). Server errors and
 * lost connections are tried again; a refused token stops the source; other refusals give the
 * message up.
 */
import type { REST } from "discord.js";
import type { PlatformFailure } from "../kit/chat-platform.js";

export type DiscordRest = REST;

/** One call without an answer this long is abandoned (the ledger tries again). */
const REST_TIMEOUT_MS = 15_000;

export async function discordRest(token: string, apiUrl: string): Promise<DiscordRest> {
  const { REST } = await import("discord.js");
  return new REST({
    api: apiUrl,
    timeout: REST_TIMEOUT_MS,
    retries: 1,
    rejectOnRateLimit: () => true,
  }).setToken(token);
}

/** What a failed call means: duck-typed, so the classes need not be loaded to read them. */
export function discordFailure(error: unknown): PlatformFailure {
  if (typeof error !== "object" || error === null) return { kind: "transient" };
  const failed = error as { retryAfter?: unknown; status?: unknown; code?: unknown };
  if (typeof failed.retryAfter === "number") {
    return { kind: "transient", retryAfterMs: Math.max(0, failed.retryAfter) };
  }
  if (typeof failed.status !== "number") return { kind: "transient" };
  if (failed.status === 401) return { kind: "bad_token" };
  if (failed.status === 429 || failed.status >= 500 || failed.status === 408) {
    return { kind: "transient" };
  }
  return { kind: "refused" };
}
