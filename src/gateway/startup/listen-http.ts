/**
 * The sixth step of `startGateway`: the HTTP server listening, with node's limits on how long
 * a request's headers and body may take. Rejects when it cannot listen (the port taken).
 */
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import type { GatewayOptions } from "../gateway-options.js";

export type HttpServer = ReturnType<typeof serve>;

/** How long an idle HTTP connection is kept open (node's default is 5 s). */
export const KEEP_ALIVE_MS = 65_000;

export function listenHttp(app: Hono, host: string, options: GatewayOptions): Promise<HttpServer> {
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const serverOptions = {
    // An idle connection is kept longer than a proxy keeps its own to the gateway (nginx's
    // upstream `keepalive_timeout` is 60 s), so the proxy is the one that closes it: with node's
    // 5 s, a request the proxy sent on a connection the gateway was closing was reset, a 502 for a
    // POSTed message (nginx re-sends no POST). A client of the gateway's own process stalled past
    // 5 s met the same reset (the tests' in-process gateways under load).
    keepAliveTimeout: KEEP_ALIVE_MS,
    headersTimeout,
    requestTimeout: headersTimeout + (options.bodyTimeoutMs ?? 30_000),
    // How often node looks for requests over those times: the bound on how late a cut comes.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, headersTimeout / 4)),
  };
  return new Promise<HttpServer>((resolve, reject) => {
    const started = serve(
      { fetch: app.fetch, hostname: host, port: options.port ?? 4317, serverOptions },
      () => resolve(started),
    );
    started.once("error", reject);
  });
}
