/**
 * The `Retry-After` of what a worker shutting down refuses (its health, a message, a command):
 * a refusal stores nothing, and behind a proxy the next attempt can reach another worker, so
 * the client is asked to wait only briefly.
 */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

/** The one line a worker shutting down answers its 503s with, naming it when it has a name. */
export function shuttingDownReason(worker: string | undefined): string {
  return worker === undefined
    ? "the gateway is shutting down; send again once it is back"
    : `worker ${worker} is shutting down; send again through another worker`;
}
