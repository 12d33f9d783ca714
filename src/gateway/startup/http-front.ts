/**
 * The fifth step of `startGateway`: the HTTP front. The page and API's own channel source
 * beside the caller's sources, the `Host` values served, the page's link codes, the caps on
 * event streams, and the Hono app over all the parts made before.
 */
import { join } from "node:path";
import type { Hono } from "hono";
import type { ChannelSource } from "../channel-source.js";
import type { GatewayOptions } from "../gateway-options.js";
import { AllowedHosts } from "../http/allowed-hosts.js";
import { createHttpApp } from "../http/http-app.js";
import { HttpChannelSource } from "../http/http-source.js";
import { LinkCodes } from "../http/link-codes.js";
import { packageRoot, packageVersion } from "../http/package-info.js";
import { StreamLimits } from "../http/stream-limits.js";
import type { TrustedProxies } from "../http/trusted-proxies.js";
import { ChannelRemoval } from "../routing/channel-removal.js";
import type { AgentRuntime } from "./agent-runtime.js";
import type { EventFlow } from "./event-flow.js";
import type { GatewayRouting } from "./gateway-routing.js";
import type { GatewayStorage } from "./open-storage.js";

export interface HttpFront {
  app: Hono;
  /** The HTTP source first, then the caller's. */
  sources: ChannelSource[];
  host: string;
  hosts: AllowedHosts;
  linkCodes: LinkCodes;
  streamLimits: StreamLimits;
}

export interface HttpFrontParts {
  storage: GatewayStorage;
  flow: EventFlow;
  runtime: AgentRuntime;
  routing: GatewayRouting;
  trustedProxies: TrustedProxies;
  /** Aborted when the gateway begins to shut down. */
  closing: AbortSignal;
  /** Whether every source, the router and the scheduler have started. */
  accepting: () => boolean;
}

export function createHttpFront(
  options: GatewayOptions,
  { storage, flow, runtime, routing, trustedProxies, closing, accepting }: HttpFrontParts,
): HttpFront {
  const { store, token } = storage;
  const health = store.health;
  const httpSource = new HttpChannelSource();
  const sources: ChannelSource[] = [httpSource, ...(options.sources ?? [])];
  const host = options.host ?? "127.0.0.1";
  const hosts = new AllowedHosts(host, options.allowedHosts);
  // Traded codes are stored: one is traded once across restarts, and through any worker.
  const linkCodes = new LinkCodes(token, {
    spend: (nonce, expiresAt) => store.spendLinkCode(nonce, expiresAt),
  });
  const streamLimits = new StreamLimits({
    ...(options.maxEventStreams === undefined ? {} : { maxTotal: options.maxEventStreams }),
    ...(options.maxEventStreamsPerClient === undefined
      ? {}
      : { maxPerClient: options.maxEventStreamsPerClient }),
  });
  const { ownership } = routing;
  const app = createHttpApp({
    token,
    hosts,
    linkCodes,
    streamLimits,
    trustedProxies,
    source: httpSource,
    router: routing.router,
    store,
    bus: flow.bus,
    pool: runtime.pool,
    bindingInfo: runtime.info,
    webhooks: sources.flatMap((source) => (source.webhook ? [source.webhook] : [])),
    bindingOf: (channelId) => runtime.bindings.bindingFor(channelId).name,
    worktrees: runtime.worktrees,
    removal: new ChannelRemoval({
      store,
      pool: runtime.pool,
      router: routing.router,
      worktrees: runtime.worktrees,
      schedules: routing.scheduler,
      permissions: runtime.permissions,
      ownership,
      ...(options.logger ? { logger: options.logger } : {}),
    }),
    scheduler: routing.scheduler,
    budget: routing.budget,
    permissions: runtime.permissions,
    media: runtime.media,
    sentFiles: runtime.sentFiles,
    webRoot: options.webRoot ?? join(packageRoot(), "web", "dist"),
    ...(health ? { storeStatus: () => health.status() } : {}),
    info: options.info ?? {
      cwd: options.engine?.cwd ?? process.cwd(),
      engine: options.engineName ?? "claude",
      model: options.engine?.model ?? "default",
      sandbox: false,
    },
    closing,
    accepting,
    ...(options.heartbeatMs ? { heartbeatMs: options.heartbeatMs } : {}),
    ...(options.maxUnreadEventBytes ? { maxUnreadEventBytes: options.maxUnreadEventBytes } : {}),
    health: {
      ok: true,
      version: packageVersion(),
      engine: options.engineName ?? "claude",
      demo: options.demo ?? false,
      ...(options.demoHint ? { hint: options.demoHint } : {}),
      ...(ownership ? { worker: ownership.worker } : {}),
    },
  });
  return { app, sources, host, hosts, linkCodes, streamLimits };
}
