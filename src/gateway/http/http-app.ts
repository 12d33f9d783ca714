/**
 * The gateway's Hono app: the error answers, the guards in front of every request, and the
 * route groups of routes/ mounted under `/api` with `app.route()`, the open ones before the
 * token check.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { PermissionRequests } from "../agents/permission-requests.js";
import type { BindingInfo } from "../bindings/binding-info.js";
import type { BudgetGuard } from "../budgets/budget-guard.js";
import type { SourceWebhook } from "../channel-source.js";
import type { AgentInfo } from "../gateway-options.js";
import type { SentFiles } from "../media/sent-files.js";
import type { ChannelRemoval } from "../routing/channel-removal.js";
import { GatewayClosedError } from "../routing/router.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";
import type { AllowedHosts } from "./allowed-hosts.js";
import { bearerToken } from "./bearer-token.js";
import { oversizedBody } from "./oversized-body.js";
import { requestGuard } from "./request-guard.js";
import { bindingRoutes } from "./routes/binding-routes.js";
import { type ChannelRoutesOptions, channelRoutes } from "./routes/channel-routes.js";
import { channelSettingsRoutes } from "./routes/channel-settings-routes.js";
import { gatewayRoutes } from "./routes/gateway-routes.js";
import { type OpenRoutesOptions, openRoutes } from "./routes/open-routes.js";
import { pairingRoutes } from "./routes/pairing-routes.js";
import { permissionRoutes } from "./routes/permission-routes.js";
import { runnerRoutes } from "./routes/runner-routes.js";
import { scheduleRoutes } from "./routes/schedule-routes.js";
import { sentFileRoutes } from "./routes/sent-file-routes.js";
import { spendRoutes } from "./routes/spend-routes.js";
import { SHUTDOWN_RETRY_AFTER_SECONDS, shuttingDownReason } from "./shutting-down.js";
import { serveStatic } from "./static-files.js";

/** Request bodies above this get 413. */
export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * `POST /api/channels/:id/messages` with attachments: 40 MiB, room for the 20 MB attachment
 * cap in base64 and form fields (a file past the cap is refused by its own check, 413).
 */
export const MAX_MESSAGE_BODY_BYTES = 40 * 1024 * 1024;
const MESSAGES_PATH = /^\/api\/channels\/[^/]+\/messages$/;

export interface HttpAppOptions extends OpenRoutesOptions, ChannelRoutesOptions {
  /** The `Host` values served; others are refused with 421. */
  hosts: AllowedHosts;
  scheduler: Scheduler;
  /** What `GET /api/spend` reports. */
  budget: BudgetGuard;
  permissions: PermissionRequests;
  webRoot: string;
  /** What `GET /api/info` answers. */
  info: AgentInfo;
  /** What each binding's and channel's agents are. */
  bindingInfo: BindingInfo;
  /** What `DELETE /api/channels/:id` runs; without it the route refuses. */
  removal?: ChannelRemoval | undefined;
  /** Chat sources' platform callbacks (Slack's Events API), mounted before the token check. */
  webhooks?: readonly SourceWebhook[] | undefined;
  /** The files agents sent, read from their workspaces (`GET /api/channels/:id/files/...`). */
  sentFiles?: Pick<SentFiles, "load"> | undefined;
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
 *   GET    /api/channels/:id/status          -> {command, status: {channelId, binding, cwd, engine,
 *                                                model, sandbox, context, models, spend}}
 *   POST   /api/channels/:id/model {model}   -> {command, model} | 400 not allowed by its binding
 *   POST   /api/channels/:id/reset {confirm?} -> {command, previousSessionId, worktree?, message}
 *                                                once done | 409 uncommitted work in its worktree
 *   GET    /api/channels                     -> {channels: [ChannelRecord + {inflight, live, binding,
 *                                                worktree?}]}
 *   DELETE /api/channels/:id[?force=1]       -> {removed, messages, schedules, worktree, text}
 *                                             | 404 unknown | 409 a turn runs, uncommitted work
 *                                               in its worktree, or another worker holds it
 *   GET    /api/channels/:id/info            -> {binding, cwd, engine, model, sandbox} (its agents)
 *   GET    /api/bindings                     -> {bindings: [ResolvedBinding + {agentModel, sandbox}],
 *                                                budget, file}
 *   GET    /api/channels/:id/messages[?limit] -> {messages: [MessageRecord]} (unknown: [])
 *   GET    /api/channels/:id/events          -> SSE of GatewayEvent (see sse-route.ts)
 *   GET    /api/channels/:id/permissions     -> {requests: [PermissionRequestInfo]} (pending)
 *   POST   /api/channels/:id/permissions/:requestId {decision: "allow"|"deny", message?}
 *   GET    /api/pairings[?source=telegram]    -> {pairings: [PairingRequest]} (waiting, let in)
 *   POST   /api/pairings/:source/:code        -> {pairing} (let in), 404 when none waits
 *                                             -> {request: PermissionRequestInfo + {decision}}
 *                                                | 404 unknown, expired or its worker gone
 *                                                | 409 already decided
 *   GET    /api/runners                      -> {runners: [RunnerInfo]}
 *   DELETE /api/runners/:channel             -> {stopped: channel} | 404
 *   GET    /api/schedules                    -> {schedules: [ScheduleRecord]}
 *   POST   /api/schedules {cron, channel, prompt} -> 201 {schedule} | 400 bad cron
 *   DELETE /api/schedules/:id                -> {deleted: id} | 404
 *   GET    /api/spend                        -> SpendReport: {at, gateway, bindings, channels},
 *                                                each spend today and this month and its limits
 *   GET    /api/info                         -> {cwd, engine, model, sandbox} (the agents)
 *   GET    /api/health (no token)            -> {ok, version, engine, demo, hint?, worker?, store?}
 *                                                | 503 the same, ok false, while the store is down
 *                                                  or from the start of a shutdown (+ error)
 *   POST   /api/link-codes                   -> 201 {code, expiresAt} (for `rudder link`)
 *   POST   /api/link-codes/redeem {code} (no token) -> {token} | 401 unknown, used or expired
 */
export function createHttpApp(options: HttpAppOptions): Hono {
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
  // A posted message may carry attachments: its body may be as big as they are, base64 and all.
  const maxBody = (method: string, path: string) =>
    method === "POST" && MESSAGES_PATH.test(path) ? MAX_MESSAGE_BODY_BYTES : MAX_BODY_BYTES;
  const tooLarge = (limit: number) => `the body is larger than ${limit} bytes`;
  app.use("/api/*", oversizedBody(maxBody, tooLarge));
  const limitedTo = (limit: number) =>
    bodyLimit({
      maxSize: limit,
      // The rest of the body is never read, so the connection cannot carry another request.
      onError: (context) => {
        context.header("connection", "close");
        return context.json({ error: tooLarge(limit) }, 413);
      },
    });
  const streamedLimit = limitedTo(MAX_BODY_BYTES);
  const streamedMessageLimit = limitedTo(MAX_MESSAGE_BODY_BYTES);
  // Only a body of no declared length is counted as it streams: a declared one was checked
  // just above, and looking at the body makes the server build a whole web Request for it.
  app.use("/api/*", (context, next) => {
    if (
      context.req.header("content-length") !== undefined &&
      context.req.header("transfer-encoding") === undefined
    ) {
      return next();
    }
    const limit = maxBody(context.req.method, context.req.path);
    return (limit === MAX_BODY_BYTES ? streamedLimit : streamedMessageLimit)(context, next);
  });

  for (const webhook of options.webhooks ?? []) {
    app.post(webhook.path, (context) => webhook.handle(context.req.raw));
  }
  app.route("/api", openRoutes(options));
  app.use("/api/*", bearerToken(options.token));
  app.route("/api", gatewayRoutes(options.linkCodes, options.info));
  app.route("/api", bindingRoutes(options.bindingInfo));
  app.route("/api", channelRoutes(options));
  if (options.sentFiles) app.route("/api", sentFileRoutes(options.sentFiles));
  app.route("/api", channelSettingsRoutes(options.store, options.removal));
  app.route("/api", permissionRoutes(options.permissions, options.store.sourceStore().grants));
  app.route("/api", pairingRoutes(options.store));
  app.route("/api", runnerRoutes(options.pool, options.permissions));
  app.route("/api", scheduleRoutes(options.scheduler));
  app.route("/api", spendRoutes(options.budget));
  return app;
}
