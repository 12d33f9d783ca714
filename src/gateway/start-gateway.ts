/**
 * The gateway's front door: `startGateway` runs the steps of startup/ in order and hands back
 * the running gateway (its URL, token, page links and `close`).
 */
import { setMaxListeners } from "node:events";
import type { AddressInfo } from "node:net";
import type { ChannelOwnership } from "./cluster/channel-ownership.js";
import type { GatewayOptions, RunningGateway } from "./gateway-options.js";
import { TrustedProxies } from "./http/trusted-proxies.js";
import type { Router } from "./routing/router.js";
import { createAgentRuntime } from "./startup/agent-runtime.js";
import { watchConfig } from "./startup/config-watch.js";
import { startEventFlow } from "./startup/event-flow.js";
import { createGatewayRouting } from "./startup/gateway-routing.js";
import { gatewayShutdown, type LateFeeds } from "./startup/gateway-shutdown.js";
import { createHttpFront } from "./startup/http-front.js";
import { listenHttp } from "./startup/listen-http.js";
import { openStorage } from "./startup/open-storage.js";
import { startSources } from "./startup/start-sources.js";

function linkHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Starts the gateway: the store (`gateway.db` under `dataDir`, or PostgreSQL) and the token
 * (`<dataDir>/token`; with PostgreSQL the store's, shared by every worker), the
 * router with its process registry, the scheduler, and the HTTP server.
 * Unanswered messages of an earlier run are dispatched again and missed
 * schedules fire once. Unless `permissionPrompts` is false, a tool call an
 * agent asks about waits for a person (`/api/channels/:id/permissions`, the
 * page's cards) and is denied after `permissionTimeoutMs`, at the end of its
 * turn, or at shutdown. `close()` (or aborting `signal`) stops everything and
 * every agent process; messages still in flight stay unanswered in the store
 * for the next start. With a networked store that is unavailable, it first waits up to
 * `shutdownWaitMs` for it to store the answers of turns that ended meanwhile.
 */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const log = options.logger ?? (() => {});
  // Before anything is opened: a bad entry is the caller's mistake, named in one line.
  const trustedProxies = TrustedProxies.parse(options.trustProxy ?? []);
  if (trustedProxies instanceof Error) throw trustedProxies;
  const storage = await openStorage(options, log);
  // Made in the steps below; the callbacks of the earlier ones reach them once they are.
  let ownership: ChannelOwnership | undefined;
  let router: Router | undefined;
  const flow = await startEventFlow(
    storage,
    (channelId) => (ownership === undefined ? true : ownership.holds(channelId)),
    log,
  );
  const runtime = createAgentRuntime(options, storage, flow.bus, () => router, log);
  const closing = new AbortController();
  const routing = createGatewayRouting(options, storage, flow, runtime, log);
  ({ router, ownership } = routing);
  // Every open event stream listens for shutdown on this one signal.
  setMaxListeners(0, closing.signal);
  /** Set once every source, the router and the scheduler have started. */
  let accepting = false;
  const front = createHttpFront(options, {
    storage,
    flow,
    runtime,
    routing,
    trustedProxies,
    closing: closing.signal,
    accepting: () => accepting,
  });
  const server = await listenHttp(front.app, front.host, options).catch(async (error: unknown) => {
    await runtime.pruning?.stop();
    await flow.eventFeed?.close();
    await storage.store.close();
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  front.hosts.setPort(port);

  const feeds: LateFeeds = {};
  const config = watchConfig(options, runtime, log);
  const shutdown = gatewayShutdown({
    storage,
    flow,
    runtime,
    routing,
    sources: front.sources,
    server,
    closing,
    feeds,
    shutdownWaitMs: options.shutdownWaitMs ?? 20_000,
    log,
  });
  const close = async () => {
    await config.stop();
    await shutdown();
  };
  try {
    await config.agree();
    await startSources({
      storage,
      flow,
      runtime,
      routing,
      sources: front.sources,
      closing: closing.signal,
      feeds,
    });
    accepting = true;
  } catch (error) {
    await close();
    throw error;
  }
  options.signal?.addEventListener("abort", () => void close(), { once: true });
  if (options.signal?.aborted) await close();

  const url = `http://${linkHost(front.host)}:${port}`;
  const newPageLink = () => `${url}/#code=${front.linkCodes.issue().code}`;
  log(`gateway: listening on ${url}`);
  return {
    url,
    token: storage.token,
    pageLink: newPageLink(),
    newPageLink,
    eventStreams: () => front.streamLimits.open,
    reloadConfig: () => config.reload(),
    close,
  };
}
