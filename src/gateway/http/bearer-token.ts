/**
 * The token check in front of every `/api` route but the open ones: `Authorization: Bearer
 * <token>`, or `?token=` on the event stream alone (EventSource cannot set headers; elsewhere
 * `?token=` is a 401 that says so).
 */
import type { MiddlewareHandler } from "hono";
import { tokenMatches } from "./auth-token.js";

/** The event stream, which `EventSource` opens without a way to set headers. */
function takesQueryToken(request: { method: string; path: string }): boolean {
  return request.method === "GET" && /^\/api\/channels\/[^/]+\/events$/.test(request.path);
}

export function bearerToken(token: string): MiddlewareHandler {
  return async (context, next) => {
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
    if (!tokenMatches(token, bearer ?? query)) {
      return context.json({ error: "missing or wrong bearer token" }, 401);
    }
    await next();
  };
}
