/**
 * The third step of `startGateway`: what runs the agents. The worker's name, the permission
 * requests waiting for a person, the pool of agent processes and, on a shared store with a
 * session file, the transcript mirror and its pruning.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import { AgentSpawner } from "../../claude-cli/spawner/agent-spawner.js";
import { channelAgents, engineInBinding } from "../agents/channel-agents.js";
import { PermissionRequests } from "../agents/permission-requests.js";
import { RegistryProcessPool } from "../agents/process-pool.js";
import { BindingInfo } from "../bindings/binding-info.js";
import { GatewayBindings } from "../bindings/bindings.js";
import { ChannelModels } from "../bindings/channel-models.js";
import type { ResolvedBinding } from "../bindings/resolved-binding.js";
import type { EventBus } from "../event-bus.js";
import { type GatewayOptions, processOptions } from "../gateway-options.js";
import { ChannelMedia, DEFAULT_MAX_ATTACHMENT_BYTES } from "../media/channel-media.js";
import { SentFileCopies } from "../media/sent-file-copies.js";
import { SentFiles } from "../media/sent-files.js";
import { createTranscriber } from "../media/transcriber.js";
import type { Router } from "../routing/router.js";
import { storedMessage } from "../routing/settlements.js";
import { TranscriptMirror } from "../transcripts/transcript-mirror.js";
import { startTranscriptPruning } from "../transcripts/transcript-pruning.js";
import { ChannelWorktrees } from "../worktrees/channel-worktrees.js";
import { defaultWorktreeRoot } from "../worktrees/worktree-place.js";
import type { GatewayStorage } from "./open-storage.js";

export interface AgentRuntime {
  worker: string;
  /** Which binding each channel uses (the caller's, or every channel on the gateway's engine). */
  bindings: GatewayBindings;
  /** The channels' `/model` choices. */
  models: ChannelModels;
  /** What each binding's (and channel's) agents are, for `/status`, the API and the page. */
  info: BindingInfo;
  permissions: PermissionRequests;
  pool: RegistryProcessPool;
  /** What starts the agents when `agentSpawner` is set; closed after the pool is stopped. */
  spawner: AgentSpawner | undefined;
  mirror: TranscriptMirror | undefined;
  pruning: { stop(): Promise<void> } | undefined;
  /** The worktrees of channels whose binding says `"isolation": "worktree"`. */
  worktrees: ChannelWorktrees;
  /** Files that come with messages, into each channel's workspace and to its model. */
  media: ChannelMedia;
  /** Files agents send to their conversations (`send_file`), kept with replies. */
  sentFiles: SentFiles;
}

/** `router()`: the router once made (an idle line before it has nowhere to go). */
export function createAgentRuntime(
  options: GatewayOptions,
  { store, shared }: GatewayStorage,
  bus: EventBus,
  router: () => Router | undefined,
  log: (line: string) => void,
): AgentRuntime {
  const worker =
    options.workerName ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  const permissions = new PermissionRequests({
    bus,
    // A line in the channel's history and stream (and the log): its agent asks past the cap.
    tell: (channelId, text) => {
      log(`gateway: ${channelId}: ${text}`);
      void store.insertSystemMessage(channelId, text, "error").then(
        (record) => bus.publish({ type: "error", message: storedMessage(record), channelId }),
        (error: unknown) =>
          log(`gateway: ${channelId}: that line was not stored: ${String(error)}`),
      );
    },
    ...(options.permissionTimeoutMs ? { timeoutMs: options.permissionTimeoutMs } : {}),
    ...(shared ? { shared: { worker, ledger: shared.permissionLedger(), logger: log } } : {}),
    grants: store.sourceStore().grants,
  });
  const bindings =
    options.bindings ??
    new GatewayBindings(undefined, {
      cwd: options.engine?.cwd ?? process.cwd(),
      engine: options.engineName === "rudder" ? "rudder" : "claude",
      model: options.engine?.model,
    });
  const models = new ChannelModels();
  const worktrees = new ChannelWorktrees({
    isolatedFolder: (channelId) => {
      const binding = bindings.bindingFor(channelId);
      return binding.isolation === "worktree" ? binding.cwd : undefined;
    },
    root: options.worktreeRoot ?? defaultWorktreeRoot(),
    logger: log,
  });
  const engineFor = (binding: ResolvedBinding, model: string | undefined) =>
    options.engineFor?.(binding, model) ?? engineInBinding(options.engine, binding, model);
  const spawner = options.agentSpawner ? new AgentSpawner({ log }) : undefined;
  const pool = new RegistryProcessPool({
    maxLive: options.maxLive ?? 8,
    ...(options.maxAgents === undefined ? {} : { maxAgents: options.maxAgents }),
    idleMinutes: options.idleMinutes ?? 20,
    ...(options.memoryFloor === undefined ? {} : { memoryFloor: options.memoryFloor }),
    cwdFor: (channelId) => worktrees.cwdFor(channelId),
    processOptions: {
      ...processOptions(options.engine, options.dataDir),
      engineName: options.engineName === "rudder" ? "rudder" : "Claude CLI",
      beforeWrite: () => store.commitPending?.(),
      // Read once: reading all of process.env at each start cost about 3 s of processor a bench.
      baseEnv: { ...process.env },
      ...(spawner ? { spawner } : {}),
    },
    agents: channelAgents({
      bindings,
      models,
      dataDir: options.dataDir,
      engineFor,
      channelTools: options.channelTools && {
        server: options.channelTools,
        maxBytes: options.media?.maxBytes ?? DEFAULT_MAX_ATTACHMENT_BYTES,
      },
    }),
    logger: log,
    onIdleLine: (channelId, line, costUsd) => router()?.acceptIdleLine(channelId, line, costUsd),
    onWakeRequest: async (channelId) => router()?.mayWake(channelId),
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
          // A session's file is where its channel's binding's engine keeps it.
          sessionFile: (sessionId: string, channelId: string | undefined) => {
            if (channelId === undefined) return sessionFile(sessionId);
            const bound = bindings.bindingFor(channelId);
            const cwd = worktrees.cwdFor(channelId) ?? bound.cwd;
            const engine = engineFor({ ...bound, cwd }, models.modelOf(channelId, bound));
            return (engine.sessionFile ?? sessionFile)(sessionId);
          },
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
  const info = new BindingInfo(bindings, models, options.infoFor);
  const workspaceFor = async (channelId: string) => {
    const failed = await worktrees.prepare(channelId);
    if (failed !== undefined) throw new Error(failed);
    return worktrees.cwdFor(channelId) ?? bindings.bindingFor(channelId).cwd;
  };
  const media = new ChannelMedia({
    workspaceFor,
    maxBytes: options.media?.maxBytes,
    transcriber: createTranscriber(options.media?.transcription ?? {}),
    logger: log,
  });
  const sentFiles = new SentFiles({
    workspaceFor,
    maxBytes: media.maxBytes,
    copies: new SentFileCopies(join(options.dataDir, "outbox")),
    logger: log,
  });
  return {
    worker,
    bindings,
    models,
    info,
    permissions,
    pool,
    spawner,
    mirror,
    pruning,
    worktrees,
    media,
    sentFiles,
  };
}
