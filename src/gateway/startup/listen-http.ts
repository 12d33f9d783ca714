/**
 * The sixth step of `startGateway`: the HTTP server listening, with node's limits on how long
 * a request's headers and body may take. Rejects when it cannot listen (the port taken).
 */
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import type { GatewayOptions } from "../gateway-options.js";

export type HttpServer = ReturnType<typeof serve>;

export function listenHttp(app: Hono, host: string, options: GatewayOptions): Promise<HttpServer> {
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const serverOptions = {
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
