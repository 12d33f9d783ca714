import type { MiddlewareHandler } from "hono";

/** True when every `%` in `path` starts a valid escape and the escapes decode as UTF-8. */
export function isWellEncoded(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuses, before any route runs, what no route can answer: a path with malformed
 * percent-encoding (`/%`, `/%zz`, a cut or overlong UTF-8 sequence) is a 400 `{error}`.
 */
export function requestGuard(): MiddlewareHandler {
  return async (context, next) => {
    const path = new URL(context.req.url).pathname;
    if (!isWellEncoded(path)) {
      return context.json({ error: "the path has malformed percent-encoding" }, 400);
    }
    await next();
  };
}
