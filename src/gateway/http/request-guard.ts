import type { MiddlewareHandler } from "hono";
import type { AllowedHosts } from "./allowed-hosts.js";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** True when every `%` in `path` starts a valid escape and the escapes decode as UTF-8. */
export function isWellEncoded(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The host of an `Origin` header, lower case; undefined for `null` or anything unparsable. */
function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.host === "" ? undefined : url.host.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Refuses, before any route runs, what no route may answer, each with a one-line `{error}`:
 * a `Host` the gateway does not serve (421: a page on another name that resolves here, as in
 * DNS rebinding), a state-changing request (POST, PUT, PATCH, DELETE) whose `Origin` is not
 * the gateway's own (403: another site's page posting here), and a path with malformed
 * percent-encoding (400: `/%`, `/%zz`, a cut or overlong UTF-8 sequence).
 */
export function requestGuard(hosts: AllowedHosts): MiddlewareHandler {
  return async (context, next) => {
    const host = context.req.header("host");
    if (!hosts.allows(host)) {
      return context.json(
        {
          error: `Host "${host ?? ""}" is not one this gateway serves (${hosts.describe()}); add it with --allowed-hosts`,
        },
        421,
      );
    }
    const origin = context.req.header("origin");
    if (
      origin !== undefined &&
      STATE_CHANGING.has(context.req.method) &&
      originHost(origin) !== host?.toLowerCase()
    ) {
      return context.json(
        {
          error: `cross-origin ${context.req.method} refused: Origin "${origin}" is not this gateway`,
        },
        403,
      );
    }
    if (!isWellEncoded(new URL(context.req.url).pathname)) {
      return context.json({ error: "the path has malformed percent-encoding" }, 400);
    }
    await next();
  };
}
