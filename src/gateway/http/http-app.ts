import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";
import type { ProcessPool } from "../agents/agent-process.js";
import type { PermissionRequests } from "../agents/permission-requests.js";
import { CHANNEL_ID_PATTERN, isValidChannelId } from "../channel-source.js";
import type { EventBus } from "../event-bus.js";
import type { CommandOutcome } from "../routing/channel-commands.js";
import { GatewayClosedError, type Router } from "../routing/router.js";
import { InvalidScheduleError, type Scheduler } from "../scheduler/scheduler.js";
import type { GatewayStore } from "../store/store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";
import type { AllowedHosts } from "./allowed-hosts.js";
import { tokenMatches } from "./auth-token.js";
import { type HealthRouteOptions, healthRoute } from "./health-route.js";
import type { HttpChannelSource } from "./http-source.js";
import type { LinkCodes } from "./link-codes.js";
import { oversizedBody } from "./oversized-body.js";
import { requestGuard } from "./request-guard.js";
import { SHUTDOWN_RETRY_AFTER_SECONDS, shuttingDownReason } from "./shutting-down.js";
import { channelEvents } from "./sse-route.js";
import { serveStatic } from "./static-files.js";
import type { StreamLimits } from "./stream-limits.js";
import { TrustedProxies } from "./trusted-proxies.js";

/** Request bodies above this get 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpAppOptions extends HealthRouteOptions {
  token: string;
  /** The `Host` values served; others are refused with 421. */
  hosts: AllowedHosts;
  /** The page's link codes, traded for the token by `POST /api/link-codes/redeem`. */
  linkCodes: LinkCodes;
  source: HttpChannelSource;
  router: Router;
  store: GatewayStore;
  bus: EventBus;
  pool: ProcessPool;
  scheduler: Scheduler;
  permissions: PermissionRequests;
  webRoot: string;
  heartbeatMs?: number;
  /** The caps on open event streams. */
  streamLimits: StreamLimits;
  /** An event stream's client reading this far behind is cut off (see `MAX_UNREAD_BYTES`). */
  maxUnreadEventBytes?: number;
  /** Whose `X-Forwarded-For` names the client (default: nobody's; the socket's peer is). */
  trustedProxies?: TrustedProxies;
}

const decisionBody = v.object({
  decision: v.picklist(["allow", "deny"], 'decision must be "allow" or "deny"'),
  message: v.optional(
    v.pipe(v.string(), v.maxLength(4000, "message must be at most 4000 characters")),
  ),
});
const redeemBody = v.object({ code: v.pipe(v.string(), v.maxLength(200, "code is too long")) });
const compactBody = v.object({
  instructions: v.optional(
    v.pipe(v.string(), v.maxLength(4000, "instructions must be at most 4000 characters")),
  ),
});
const messageBody = v.object({
  text: v.pipe(v.string(), v.minLength(1, "text must not be empty")),
});
/** `channelId` is accepted for `channel`, as schedules are listed with `channelId`. */
const scheduleBody = v.pipe(
  v.unknown(),
  v.transform((raw) =>
    typeof raw === "object" && raw !== null && !("channel" in raw) && "channelId" in raw
      ? { ...raw, channel: (raw as { channelId: unknown }).channelId }
      : raw,
  ),
  v.object({
    cron: v.pipe(v.string(), v.minLength(1, "cron must not be empty")),
    channel: v.pipe(
      v.string(),
      v.regex(CHANNEL_ID_PATTERN, "channel must match [A-Za-z0-9._:-]{1,128}"),
    ),
    prompt: v.pipe(v.string(), v.minLength(1, "prompt must not be empty")),
  }),
);

/** A request the API refuses, with the status and the `{error}` text it answers. */
class ApiError extends HTTPException {
  constructor(message: string, status: 400 | 404 | 409 | 502 = 400) {
    super(status, { message });
  }
}

/** The body as `schema` wants it; with `optional`, an empty body reads as `{}`. */
async function readJson<T>(
  request: Request,
  schema: v.GenericSchema<unknown, T>,
  optional = false,
): Promise<T> {
  let body: unknown;
  try {
    const text = await request.text();
    body = optional && text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw new ApiError("the body must be valid JSON");
  }
  const parsed = v.safeParse(schema, body);
  if (!parsed.success) throw new ApiError(issueText(parsed.issues[0]));
  return parsed.output;
}

/** One line naming the field: "text is required", "cron: <what is wrong with it>". */
function issueText(issue: v.BaseIssue<unknown>): string {
  const path = v.getDotPath(issue);
  if (path === null) return issue.message;
  const missing = issue.kind === "schema" && issue.type === "object" && issue.input === undefined;
  return missing ? `${path} is required` : `${path}: ${issue.message}`;
}

/** The peer's address as @hono/node-server passes it (its `incoming` request). */
function peerAddress(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)
    ?.incoming;
  return incoming?.socket?.remoteAddress;
}

/** The event stream, which `EventSource` opens without a way to set headers. */
function takesQueryToken(request: { method: string; path: string }): boolean {
  return request.method === "GET" && /^\/api\/channels\/[^/]+\/events$/.test(request.path);
}

function channelParam(value: string | undefined): string {
  if (value === undefined || !isValidChannelId(value)) {
    throw new ApiError("channel ids match [A-Za-z0-9._:-]{1,128}");
  }
  return value;
}

/**
 * The gateway's HTTP API and the page, for the `Host` values `hosts` allows (see
 * `requestGuard`). Every `/api` route but `GET /api/health` needs
 * `Authorization: Bearer <token>`; the event stream also takes `?token=`, as EventSource
 * cannot set headers (elsewhere `?token=` is a 401). Errors are JSON `{error}` with a
 * 4xx status (401 token, 400 bad body, id or malformed percent-encoding in the path, 404
 * unknown, 409 conflict, 413 body over 1 MiB) or a 503 with `Retry-After` and the reason (past
 * the event-stream caps, while the store cannot be reached, while not routing: starting or
 * shutting down); an unexpected failure is a 500 `{error}` without a stack.
 *
 *   POST   /api/channels/:id/messages {text} -> 202 {id, disposition}
 *   POST   /api/channels/:id/compact {instructions?} -> {command, preTokens, postTokens,
 *                                                contextWindow, sessionId, message} once done
 *                                             | 404 unknown | 409 nothing to compact | 502 failed
 *   POST   /api/channels/:id/reset           -> {command, previousSessionId, message} once done
 *   GET    /api/channels                     -> {channels: [ChannelRecord + {inflight, live}]}
 *   GET    /api/channels/:id/messages[?limit] -> {messages: [MessageRecord]} (unknown: [])
 *   GET    /api/channels/:id/events          -> SSE of GatewayEvent (see sse-route.ts)
 *   GET    /api/channels/:id/permissions     -> {requests: [PermissionRequestInfo]} (pending)
 *   POST   /api/channels/:id/permissions/:requestId {decision: "allow"|"deny", message?}
 *                                             -> {request: PermissionRequestInfo + {decision}}
 *                                                | 404 unknown, expired or its worker gone
 *                                                | 409 already decided
 *   GET    /api/runners                      -> {runners: [RunnerInfo]}
 *   DELETE /api/runners/:channel             -> {stopped: channel} | 404
 *   GET    /api/schedules                    -> {schedules: [ScheduleRecord]}
 *   POST   /api/schedules {cron, channel, prompt} -> 201 {schedule} | 400 bad cron
 *   DELETE /api/schedules/:id                -> {deleted: id} | 404
 *   GET    /api/health (no token)            -> {ok, version, engine, demo, hint?, worker?, store?}
 *                                                | 503 the same, ok false, while the store is down
 *                                                  or from the start of a shutdown (+ error)
 *   POST   /api/link-codes                   -> 201 {code, expiresAt} (for `rudder link`)
 *   POST   /api/link-codes/redeem {code} (no token) -> {token} | 401 unknown, used or expired
 */
export function createHttpApp(options: HttpAppOptions): Hono {
  const { router, store, bus, pool, scheduler, permissions } = options;
  const app = new Hono();
  const shuttingDown = shuttingDownReason(options.health.worker);

  app.onError((error, context) => {
    if (error instanceof HTTPException) {
      return context.json({ error: error.message }, error.status);
    }
    if (error instanceof GatewayClosedError) {
      context.header("retry-after", String(SHUTDOWN_RETRY_AFTER_SECONDS));
      const reason = options.closing.aborted ? shuttingDown : error.message;
      return context.json({ error: reason }, 503);
    }
    if (isStoreUnavailable(error)) {
      context.header("retry-after", String(error.retryAfterSeconds));
      return context.json({ error: error.message }, 503);
    }
    return context.json({ error: "internal error" }, 500);
  });
  app.notFound((context) =>
    context.req.path.startsWith("/api/")
      ? context.json({ error: `no route ${context.req.method} ${context.req.path}` }, 404)
      : serveStatic(options.webRoot, context.req.path),
  );

  app.use(requestGuard(options.hosts));
  const tooLarge = `the body is larger than ${MAX_BODY_BYTES} bytes`;
  app.use("/api/*", oversizedBody(MAX_BODY_BYTES, tooLarge));
  const streamedLimit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    // The rest of the body is never read, so the connection cannot carry another request.
    onError: (context) => {
      context.header("connection", "close");
      return context.json({ error: tooLarge }, 413);
    },
  });
  // Only a body of no declared length is counted as it streams: a declared one was checked
  // just above, and looking at the body makes the server build a whole web Request for it.
  app.use("/api/*", (context, next) =>
    context.req.header("content-length") !== undefined &&
    context.req.header("transfer-encoding") === undefined
      ? next()
      : streamedLimit(context, next),
  );

  app.get("/api/health", healthRoute(options));
  app.post("/api/link-codes/redeem", async (context) => {
    const { code } = await readJson(context.req.raw, redeemBody);
    if (!(await options.linkCodes.redeem(code))) {
      return context.json(
        {
          error:
            "this link's code is unknown, expired or already used (a link works once, within 10 minutes); run `rudder link` for a fresh one",
        },
        401,
      );
    }
    return context.json({ token: options.token });
  });

  app.use("/api/*", async (context, next) => {
    const header = context.req.header("authorization");
    const bearer = header?.startsWith("Bearer ") ? header.slice(7).trim() : undefined;
    const query = context.req.query("token");
    if (bearer === undefined && query !== undefined && !takesQueryToken(context.req)) {
      return context.json(
        {
          error:
            "?token= is accepted only on GET /api/channels/:id/events; send Authorization: Bearer <token>",
        },
        401,
      );
    }
    if (!tokenMatches(options.token, bearer ?? query)) {
      return context.json({ error: "missing or wrong bearer token" }, 401);
    }
    await next();
  });
  app.post("/api/link-codes", (context) => context.json(options.linkCodes.issue(), 201));

  app.get("/api/channels", async (context) => {
    const channels = await store.listChannels();
    const live = new Set(pool.list().map((runner) => runner.channelId));
    return context.json({
      channels: channels.map((channel) => ({
        ...channel,
        inflight: router.inflight(channel.id),
        live: live.has(channel.id),
      })),
    });
  });

  app.post("/api/channels/:id/messages", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const { text } = await readJson(context.req.raw, messageBody);
    const delivery = await options.source.deliver(channelId, text);
    return context.json(delivery, 202);
  });

  /** A command's answer once it is done: what it did and its divider, or why it failed. */
  const command = async (
    channelId: string,
    run: () => Promise<CommandOutcome>,
  ): Promise<Omit<Extract<CommandOutcome, { ok: true }>, "ok">> => {
    if ((await store.getChannel(channelId)) === null) {
      throw new ApiError(`no channel ${channelId}`, 404);
    }
    const outcome = await run();
    if (!outcome.ok) throw new ApiError(outcome.error, outcome.status);
    const { ok: _, ...answer } = outcome;
    return answer;
  };

  app.post("/api/channels/:id/compact", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const { instructions } = await readJson(context.req.raw, compactBody, true);
    return context.json(await command(channelId, () => router.compact(channelId, instructions)));
  });

  app.post("/api/channels/:id/reset", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    return context.json(await command(channelId, () => router.reset(channelId)));
  });

  app.get("/api/channels/:id/messages", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const limitText = context.req.query("limit");
    const limit = limitText === undefined ? undefined : Number(limitText);
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
      throw new ApiError("limit must be a positive integer");
    }
    return context.json({ messages: await store.listMessages(channelId, limit) });
  });

  app.get("/api/channels/:id/events", (context) =>
    channelEvents(context, {
      bus,
      channelId: channelParam(context.req.param("id")),
      closing: options.closing,
      heartbeatMs: options.heartbeatMs ?? 15_000,
      limits: options.streamLimits,
      ...(options.maxUnreadEventBytes ? { maxUnreadBytes: options.maxUnreadEventBytes } : {}),
      client: (options.trustedProxies ?? TrustedProxies.none).client(
        peerAddress(context.env),
        context.req.header("x-forwarded-for"),
      ),
    }),
  );

  app.get("/api/channels/:id/permissions", async (context) =>
    context.json({ requests: await permissions.list(channelParam(context.req.param("id"))) }),
  );

  app.post("/api/channels/:id/permissions/:requestId", async (context) => {
    const channelId = channelParam(context.req.param("id"));
    const requestId = context.req.param("requestId");
    const { decision, message } = await readJson(context.req.raw, decisionBody);
    const outcome = await permissions.decide(channelId, requestId, decision, message);
    if (outcome.status === "owner_gone") {
      throw new ApiError(
        `permission request ${requestId} was asked on worker ${outcome.owner}, which no longer drives ${channelId} (it died or lost the channel); nobody waits for the answer`,
        404,
      );
    }
    if (outcome.status === "unknown") {
      throw new ApiError(`no pending permission request ${requestId} on ${channelId}`, 404);
    }
    if (outcome.status === "already_decided") {
      const done = outcome.decision === "allow" ? "allowed" : "denied";
      throw new ApiError(`permission request ${requestId} was already ${done}`, 409);
    }
    return context.json({ request: outcome.request });
  });

  app.get("/api/runners", (context) => context.json({ runners: pool.list() }));

  app.delete("/api/runners/:channel", async (context) => {
    const channelId = channelParam(context.req.param("channel"));
    if (!(await pool.stop(channelId))) {
      throw new ApiError(`no live agent process for channel ${channelId}`, 404);
    }
    permissions.expire(channelId, "the agent process was stopped");
    return context.json({ stopped: channelId });
  });

  app.get("/api/schedules", async (context) => context.json({ schedules: await scheduler.list() }));

  app.post("/api/schedules", async (context) => {
    const body = await readJson(context.req.raw, scheduleBody);
    try {
      const schedule = await scheduler.add({
        cron: body.cron,
        channelId: body.channel,
        prompt: body.prompt,
      });
      return context.json({ schedule }, 201);
    } catch (error) {
      if (error instanceof InvalidScheduleError) throw new ApiError(error.message);
      throw error;
    }
  });

  app.post("/api/schedules/:id/resume", async (context) => {
    const scheduleId = context.req.param("id");
    const schedule = await scheduler.resume(scheduleId);
    if (!schedule) throw new ApiError(`no schedule with id ${scheduleId}`, 404);
    return context.json({ schedule });
  });

  app.delete("/api/schedules/:id", async (context) => {
    const scheduleId = context.req.param("id");
    if (!(await scheduler.remove(scheduleId))) {
      throw new ApiError(`no schedule ${scheduleId}`, 404);
    }
    return context.json({ deleted: scheduleId });
  });

  return app;
}
