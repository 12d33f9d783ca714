import type { IncomingMessage } from "node:http";
import type { MiddlewareHandler } from "hono";

/** How much of a declared-too-big body is read away before answering; past it, the socket is cut. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/** Resolves once `incoming` has ended, errored, or `limit` bytes have been read and dropped. */
function drain(incoming: IncomingMessage, limit: number): Promise<void> {
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      incoming.off("data", onData);
      incoming.off("end", done);
      incoming.off("error", done);
      incoming.off("close", done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > limit) done();
    };
    incoming.on("data", onData);
    incoming.once("end", done);
    incoming.once("error", done);
    incoming.once("close", done);
    incoming.resume();
  });
}

/**
 * A body whose `Content-Length` is over `maxBytes` (by method and path) gets 413 with a one-line `{error}`, but only
 * after what the client sends has been read and dropped (up to 64 MiB; the body timeout bounds
 * how long): closing a socket with unread bytes makes the kernel send a reset, which can destroy
 * the answer before the client reads it. Bodies without a declared length are left to the
 * streaming limit behind this.
 */
export function oversizedBody(
  maxBytes: (method: string, path: string) => number,
  message: (maxBytes: number) => string,
): MiddlewareHandler {
  return async (context, next) => {
    const declared = Number(context.req.header("content-length") ?? "");
    const incoming = (context.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const limit = maxBytes(context.req.method, context.req.path);
    if (!Number.isFinite(declared) || declared <= limit || !incoming) return next();
    await drain(incoming, DRAIN_LIMIT_BYTES);
    context.header("connection", "close");
    return context.json({ error: message(limit) }, 413);
  };
}
