import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { PermissionRequests } from "./agents/permission-requests.js";
import { RegistryProcessPool } from "./agents/process-pool.js";
import type { ChannelSource, SourceContext } from "./channel-source.js";
import { ChannelOwnership } from "./cluster/channel-ownership.js";
import { watchForwarded } from "./cluster/forwarded-outcome.js";
import { sessionAfterTakeover } from "./cluster/session-takeover.js";
import { EventBus } from "./event-bus.js";
import { type GatewayOptions, processOptions, type RunningGateway } from "./gateway-options.js";
import { AllowedHosts } from "./http/allowed-hosts.js";
import { gatewayToken } from "./http/auth-token.js";
import { createHttpApp } from "./http/http-app.js";
import { HttpChannelSource } from "./http/http-source.js";
import { LinkCodes } from "./http/link-codes.js";
import { StreamLimits } from "./http/stream-limits.js";
import { TrustedProxies } from "./http/trusted-proxies.js";
import { packageRoot, packageVersion } from "./package-info.js";
import { Router } from "./routing/router.js";
import { Scheduler } from "./scheduler/scheduler.js";
import { waitForHeldWrites } from "./store/held-writes-at-shutdown.js";
import { openStore } from "./store/open-store.js";
import { patientWrites } from "./store/patient-writes.js";
import { makeDataFolderPrivate } from "./store/private-data-folder.js";
import { isSharedStore, type SharedStore } from "./store/shared-store.js";
import { sessionIdOf, TranscriptMirror } from "./transcripts/transcript-mirror.js";
import { startTranscriptPruning } from "./transcripts/transcript-pruning.js";

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
  makeDataFolderPrivate(options.dataDir, log);
  const store = await openStore(options.store ?? { kind: "sqlite" }, options.dataDir, log);
  const token = await gatewayToken(options.dataDir, store).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const shared = isSharedStore(store) ? store : undefined;
  const sharedName = await shared?.eventStreamName().catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  let ownership: ChannelOwnership | undefined;
  // A turn that ends while the store cannot be written (the database away, SQLite's disk full
  // or file locked) keeps its answer (and the events before it) until it can, or until a
  // shutdown has waited for it long enough.
  const holding = new AbortController();
  const health = store.health;
  const patient = health
    ? patientWrites(store, health, holding.signal, (channelId) =>
        ownership === undefined ? true : ownership.holds(channelId),
      )
    : undefined;
  const bus = new EventBus(
    shared && patient
      ? {
          shared: {
            // The patient wrapper of `shared` itself, so a shared store's methods.
            append: (events) => (patient.store as SharedStore).appendEvents(events),
            after: (channelId, after, limit) => shared.eventsAfter(channelId, after, limit),
            since: (after, limit) => shared.eventsSince(after, limit),
          },
          ...(sharedName ? { sharedName } : {}),
          logger: log,
        }
      : {},
  );
  // Every worker streams every channel's events, whichever worker publishes them.
  const eventFeed = await shared
    ?.listenForEvents(
      (numbered) => bus.deliver(numbered),
      () => void bus.catchUp(),
    )
    .catch(async (error: unknown) => {
      await store.close();
      throw error;
    });
  let router: Router | undefined;
  const worker =
    options.workerName ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  const permissions = new PermissionRequests({
    bus,
    ...(options.permissionTimeoutMs ? { timeoutMs: options.permissionTimeoutMs } : {}),
    ...(shared ? { shared: { worker, ledger: shared.permissionLedger(), logger: log } } : {}),
  });
  const pool = new RegistryProcessPool({
    maxLive: options.maxLive ?? 8,
    ...(options.maxAgents === undefined ? {} : { maxAgents: options.maxAgents }),
    idleMinutes: options.idleMinutes ?? 20,
    processOptions: {
      ...processOptions(options.engine, options.dataDir),
      beforeWrite: () => store.commitPending?.(),
    },
    logger: log,
    onIdleLine: (channelId, line) => router?.acceptIdleLine(channelId, line),
    ...(options.permissionPrompts === false
      ? {}
      : {
          onPermissionRequest: (channelId, request) => permissions.ask(channelId, request),
        }),
  });
  const sessionFile = options.engine?.sessionFile;
  const kept = options.transcripts ?? {};
  const mirror =
    shared && sessionFile
      ? new TranscriptMirror({
          store,
          sessionFile,
          logger: log,
          ...(kept.compactAfter ? { compactAfter: kept.compactAfter } : {}),
        })
      : undefined;
  const pruning = mirror
    ? startTranscriptPruning({
        store,
        logger: log,
        ...(kept.pruneEveryMs ? { everyMs: kept.pruneEveryMs } : {}),
        ...(kept.keepUnusedMs !== undefined ? { keepUnusedMs: kept.keepUnusedMs } : {}),
      })
    : undefined;
  const closing = new AbortController();
  router = new Router({
    store: patient?.store ?? store,
    pool,
    bus,
    logger: log,
    ...(shared
      ? {
          claimChannel: (channelId: string) => ownership!.claim(channelId),
          drives: (channelId: string) => ownership!.holds(channelId),
        }
      : {}),
    onTurnEnd: (channelId) =>
      permissions.expire(channelId, "the turn ended before anyone answered"),
    ...(mirror
      ? {
          onAgentOutput: (channelId: string, line: unknown) =>
            mirror.noteOutput(channelId, sessionIdOf(line)),
          beforeAnswer: (channelId: string, sessionId: string | null) =>
            mirror.flush(channelId, sessionId ?? undefined),
        }
      : {}),
    ...(options.turnTimeoutMs ? { turnTimeoutMs: options.turnTimeoutMs } : {}),
    ...(options.rateLimitRetryMs ? { rateLimitRetryMs: options.rateLimitRetryMs } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    ...(options.maxDeliveries ? { maxDeliveries: options.maxDeliveries } : {}),
  });
  ownership = shared
    ? new ChannelOwnership({
        store: shared,
        router,
        worker,
        leaseSeconds: options.leaseSeconds ?? 15,
        stopChannel: (channelId) => pool.stop(channelId),
        watchForwarded: (channelId) => watchForwarded(bus, channelId),
        ...(mirror
          ? {
              resumeSession: (channelId: string, sessionId: string | null) =>
                sessionAfterTakeover({ store, mirror, bus, logger: log }, channelId, sessionId),
            }
          : {}),
        logger: log,
      })
    : undefined;
  // Back from an outage: every lease is re-validated before anything is acted on again.
  if (shared && ownership) shared.health.onRestored(() => ownership!.revalidate());
  const scheduler = new Scheduler({
    store,
    router,
    bus,
    logger: log,
    ...(shared && ownership
      ? {
          cluster: {
            deliver: (channelId: string, text: string, source: string) =>
              ownership!.deliver(channelId, text, source),
            claimFiring: (id: string, dueAt: string, next: string | null, now: Date) =>
              shared.claimFiring(id, dueAt, next, now),
            announce: (id: string) => shared.announceSchedule(id),
          },
        }
      : {}),
  });
  // Then, firings due while it was away fire once (each claimed, so once across workers).
  shared?.health.onRestored(() => scheduler.fireMissed());
  const httpSource = new HttpChannelSource();
  const sources: ChannelSource[] = [httpSource, ...(options.sources ?? [])];
  // Every open event stream listens for shutdown on this one signal.
  setMaxListeners(0, closing.signal);
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
  /** Set once every source, the router and the scheduler have started. */
  let accepting = false;
  const app = createHttpApp({
    token,
    hosts,
    linkCodes,
    streamLimits,
    trustedProxies,
    source: httpSource,
    router,
    store,
    bus,
    pool,
    scheduler,
    permissions,
    webRoot: options.webRoot ?? join(packageRoot(), "web", "dist"),
    ...(health ? { storeStatus: () => health.status() } : {}),
    closing: closing.signal,
    accepting: () => accepting,
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

  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const serverOptions = {
    headersTimeout,
    requestTimeout: headersTimeout + (options.bodyTimeoutMs ?? 30_000),
    // How often node looks for requests over those times: the bound on how late a cut comes.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, headersTimeout / 4)),
  };
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve(
      { fetch: app.fetch, hostname: host, port: options.port ?? 4317, serverOptions },
      () => resolve(started),
    );
    started.once("error", reject);
  }).catch(async (error: unknown) => {
    await pruning?.stop();
    await eventFeed?.close();
    await store.close();
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  hosts.setPort(port);

  let scheduleFeed: { close(): Promise<void> } | undefined;
  let permissionFeed: { close(): Promise<void> } | undefined;
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      // From now on this worker takes no channel (another worker does) and routes nothing new.
      ownership?.quiesce();
      closing.abort();
      await scheduleFeed?.close();
      await permissionFeed?.close();
      await scheduler.stop();
      await Promise.allSettled(sources.map((source) => source.stop()));
      await router.close();
      permissions.close();
      await pool.stopAll();
      if (health && patient) {
        // Renewing what it holds, taking nothing new, while the answers it holds are stored.
        await waitForHeldWrites({
          writes: patient,
          storeUp: () => health.up,
          waitMs: options.shutdownWaitMs ?? 20_000,
          logger: log,
        });
      }
      holding.abort();
      await router.idle();
      await mirror?.close();
      await pruning?.stop();
      // Only once nothing runs here: another worker may take the channels at once.
      await ownership?.stop();
      await eventFeed?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ("closeAllConnections" in server) server.closeAllConnections();
      });
      await store.close();
      log("gateway: stopped");
    })();
    return closed;
  };

  const sourceContext: SourceContext = {
    subscribe: (channelId, listener) =>
      bus.listen(channelId, (numbered) => listener(numbered.event)),
    channelIds: async () => (await store.listChannels()).map((channel) => channel.id),
    permissions,
    signal: closing.signal,
  };
  try {
    for (const source of sources) {
      await source.start(
        (channelId, text, meta) =>
          (ownership ?? router).deliver(
            channelId,
            text,
            typeof meta?.source === "string" ? meta.source : source.name,
          ),
        sourceContext,
      );
    }
    // A person's answer through another worker to a request of this worker's agents.
    permissionFeed = await shared?.permissionLedger().listen(
      worker,
      (requestId) => void permissions.answered(requestId),
      () => void permissions.recheck(),
    );
    await ownership?.start();
    await router.start();
    // Schedules created, changed or deleted through any worker are armed or disarmed here too.
    scheduleFeed = await shared?.listenForSchedules(
      (scheduleId) => void scheduler.refresh(scheduleId),
      () => void scheduler.refreshAll(),
    );
    await scheduler.start();
    accepting = true;
  } catch (error) {
    await close();
    throw error;
  }
  options.signal?.addEventListener("abort", () => void close(), { once: true });
  if (options.signal?.aborted) await close();

  const url = `http://${linkHost(host)}:${port}`;
  const newPageLink = () => `${url}/#code=${linkCodes.issue().code}`;
  log(`gateway: listening on ${url}`);
  return {
    url,
    token,
    pageLink: newPageLink(),
    newPageLink,
    eventStreams: () => streamLimits.open,
    close,
  };
}
