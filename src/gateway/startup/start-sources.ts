/**
 * The last step of `startGateway`: the channels' sessions restored (a source may deliver as it
 * starts), every channel source started (each delivering to the
 * channel's owner, or to the router alone), the feeds of other workers' permission answers
 * and schedule changes opened, the channels taken, the router and the scheduler started.
 * Rejects with the first failure; the caller then shuts down what was started.
 */
import type { ChannelSource, SourceContext } from "../channel-source.js";
import { ChatTitles } from "../routing/chat-titles.js";
import { senderSource } from "../routing/sender-line.js";
import type { AgentRuntime } from "./agent-runtime.js";
import type { EventFlow } from "./event-flow.js";
import type { GatewayRouting } from "./gateway-routing.js";
import type { LateFeeds } from "./gateway-shutdown.js";
import type { GatewayStorage } from "./open-storage.js";

export interface SourceParts {
  storage: GatewayStorage;
  flow: EventFlow;
  runtime: AgentRuntime;
  routing: GatewayRouting;
  sources: ChannelSource[];
  /** Aborted when the gateway begins to shut down. */
  closing: AbortSignal;
  /** Filled in as each feed opens, so a shutdown closes those that did. */
  feeds: LateFeeds;
}

export async function startSources({
  storage,
  flow,
  runtime,
  routing,
  sources,
  closing,
  feeds,
}: SourceParts): Promise<void> {
  const { store, shared } = storage;
  const { router, ownership, scheduler } = routing;
  const { permissions, worker } = runtime;
  const sourceContext: SourceContext = {
    subscribe: (channelId, listener) =>
      flow.bus.listen(channelId, (numbered) => listener(numbered.event)),
    channelIds: async () => (await store.listChannels()).map((channel) => channel.id),
    permissions,
    signal: closing,
    store: store.sourceStore(),
    worker,
    // A chat's /stop: the turn running on this worker (the page's Stop does the same).
    interrupt: (channelId) => router.interrupt(channelId),
    ...(ownership ? { exclusive: ownership.receiveExclusive } : {}),
    // Read at each message, so a reloaded configuration applies to the next one.
    allowFor: (channelId) => runtime.bindings.bindingFor(channelId).allow,
    attachments: runtime.media,
    readSentFile: (channelId, file) => runtime.sentFiles.read(channelId, file),
    releaseSentFile: (file) => runtime.sentFiles.release(file),
  };
  const chatTitles = new ChatTitles(store.channelSettings());
  // Before any source starts: one may deliver as it does (messages read back).
  await router.restoreSessions();
  for (const source of sources) {
    await source.start(async (channelId, text, meta, stored) => {
      const delivery = await (ownership ?? router).deliver(
        channelId,
        text,
        senderSource(meta, source.name),
        stored,
        meta?.attachments,
        typeof meta?.deliveryKey === "string"
          ? { source: source.name, key: meta.deliveryKey }
          : undefined,
      );
      // Stored after the message, whose channel then exists.
      chatTitles.note(channelId, meta?.chatTitle);
      return delivery;
    }, sourceContext);
  }
  // A person's answer through another worker to a request of this worker's agents.
  feeds.permissions = await shared?.permissionLedger().listen(
    worker,
    (requestId) => void permissions.answered(requestId),
    () => void permissions.recheck(),
  );
  await ownership?.start();
  await router.start();
  // Schedules created, changed or deleted through any worker are armed or disarmed here too.
  feeds.schedules = await shared?.listenForSchedules(
    (scheduleId) => void scheduler.refresh(scheduleId),
    () => void scheduler.refreshAll(),
  );
  await scheduler.start();
}
