/** Node's socket error codes that mean the server cannot be reached, and how to say so. */
const SOCKET_CODES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection lost",
  EPIPE: "connection lost",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable for the connection",
  ENETUNREACH: "network unreachable for the connection",
  ENOTFOUND: "host not found for the connection",
  EAI_AGAIN: "host not found for the connection",
};

/** node-postgres's own messages for a connection that failed, timed out or was cut. */
const CLIENT_MESSAGES: Array<[RegExp, string]> = [
  [/^Connection terminated due to connection timeout/, "connection timed out"],
  [/^Connection terminated/, "connection lost"],
  [/^timeout exceeded when trying to connect/, "connection timed out"],
  [/^Query read timeout/, "connection timed out (no answer to a statement)"],
  [/is not queryable$/, "connection lost"],
];

/**
 * Why `error` (from node-postgres) means the database cannot be reached now, in a few words
 * ("connection refused"), or null when it is another failure (a refused statement, a bug).
 * SQLSTATE class 08 is a connection exception; 57P01-57P03 are a server shutting down,
 * crashed or starting up.
 */
export function connectionFailure(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  const { code } = error as { code?: unknown };
  if (typeof code === "string") {
    const socket = SOCKET_CODES[code];
    if (socket !== undefined) return socket;
    if (code === "57P01" || code === "57P02") return "connection lost (the server shut down)";
    if (code === "57P03") return "connection refused (the server is not accepting connections)";
    if (code.startsWith("08")) return "connection failed";
  }
  for (const [pattern, reason] of CLIENT_MESSAGES) {
    if (pattern.test(error.message)) return reason;
  }
  const { cause } = error as { cause?: unknown };
  return cause === undefined || cause === error ? null : connectionFailure(cause);
}
