/**
 * Slack's Events API over HTTP (`POST /slack/events`), for installs with a public address:
 * each request's signature checked (`v0=` HMAC-SHA256 of `v0:<timestamp>:<body>` with the
 * signing secret, in constant time), a timestamp more than five minutes off refused, the same
 * signed request refused the second time, `url_verification` answered with its challenge, and
 * everything else handed to the platform's queue and answered once its message is stored,
 * before it is routed (a slash command with its reply); not stored within 2.5 s (Slack waits
 * 3), a 503, and Slack sends it again (the store's delivery claim drops it if it was stored
 * meanwhile). Events, button presses (`payload=`) and slash
 * commands (form fields) arrive here as Socket Mode's envelopes do.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { SourceWebhook } from "../../gateway/channel-source.js";
import type { SlackPlatform } from "./slack-platform.js";

/** Slack's replay window. */
const WINDOW_SECONDS = 5 * 60;
/** How long a request waits for its message to be stored: Slack gives up after 3 s. */
const STORE_WAIT_MS = 2500;
/** Slack's requests are small; anything past this is not Slack. */
const MAX_BODY_BYTES = 1024 * 1024;

export const SLACK_EVENTS_PATH = "/slack/events";

export function slackSignature(secret: string, timestamp: string, body: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

export class SlackEventsApi implements SourceWebhook {
  readonly path = SLACK_EVENTS_PATH;
  readonly #secret: string;
  readonly #platform: SlackPlatform;
  readonly #now: () => number;
  /** Signatures seen within the window, with when they expire (ms). */
  readonly #seen = new Map<string, number>();

  constructor(secret: string, platform: SlackPlatform, now: () => number = Date.now) {
    this.#secret = secret;
    this.#platform = platform;
    this.#now = now;
  }

  async handle(request: Request): Promise<Response> {
    const declared = Number(request.headers.get("content-length") ?? 0);
    if (declared > MAX_BODY_BYTES) return refuse(413, "the body is too large");
    const body = await request.text();
    if (body.length > MAX_BODY_BYTES) return refuse(413, "the body is too large");
    const refusal = this.#verify(request.headers, body);
    if (refusal !== undefined) return refuse(401, refusal);
    const type = request.headers.get("content-type") ?? "";
    return type.includes("application/json")
      ? await this.#json(body, request.headers)
      : await this.#form(body);
  }

  /** Undefined when the request is Slack's and new; else why not. */
  #verify(headers: Headers, body: string): string | undefined {
    const timestamp = headers.get("x-slack-request-timestamp") ?? "";
    const signature = headers.get("x-slack-signature") ?? "";
    const now = this.#now();
    if (!/^\d+$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > WINDOW_SECONDS) {
      return "the request's timestamp is missing or more than five minutes off";
    }
    const expected = Buffer.from(slackSignature(this.#secret, timestamp, body));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return "the request's signature does not match the signing secret";
    }
    for (const [seen, expires] of this.#seen) if (expires < now) this.#seen.delete(seen);
    if (this.#seen.has(signature)) return "the request was sent before (a replay)";
    this.#seen.set(signature, now + WINDOW_SECONDS * 2000);
    return undefined;
  }

  async #json(body: string, headers: Headers): Promise<Response> {
    let parsed: { type?: string; challenge?: string };
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      return refuse(400, "the body is not JSON");
    }
    if (parsed.type === "url_verification") return Response.json({ challenge: parsed.challenge });
    const retry = Number(headers.get("x-slack-retry-num") ?? 0) > 0;
    return this.#hand("events_api", parsed, retry);
  }

  async #form(body: string): Promise<Response> {
    const fields = new URLSearchParams(body);
    const payload = fields.get("payload");
    if (payload !== null) {
      try {
        return this.#hand("interactive", JSON.parse(payload), false);
      } catch {
        return refuse(400, "the payload is not JSON");
      }
    }
    const command = Object.fromEntries(fields);
    if (!command.command || !command.channel_id) return refuse(400, "not a slash command");
    return this.#hand("slash_commands", command, false);
  }

  /**
   * Handed to the platform's queue and answered once stored (with the ack's payload, if any); a
   * 503 when this worker is not receiving or the message was not stored in time (Slack retries).
   */
  async #hand(type: string, body: unknown, retry: boolean): Promise<Response> {
    let answer: (payload: Record<string, unknown> | undefined) => void = () => {};
    const acked = new Promise<Record<string, unknown> | undefined>((resolve) => {
      answer = resolve;
    });
    const taken = this.#platform.dispatch({
      type,
      body,
      retry,
      ack: async (payload) => answer(payload),
    });
    const late = Symbol("late");
    const payload = taken
      ? await Promise.race([acked, sleep(STORE_WAIT_MS, late, { ref: false })])
      : late;
    if (payload === late) {
      return new Response("not taken here now", { status: 503, headers: { "retry-after": "5" } });
    }
    return payload === undefined ? new Response(null, { status: 200 }) : Response.json(payload);
  }
}

function refuse(status: number, reason: string): Response {
  return Response.json({ error: reason }, { status });
}
