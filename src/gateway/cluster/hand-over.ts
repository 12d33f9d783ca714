/**
 * A clean shutdown hands its channels over: for each released channel with a message
 * unanswered, every worker is woken once, and the first to claim the channel answers its
 * messages, rather than a sweep finding them later.
 */
import { ANY_WORKER, type SharedStore } from "../store/shared-store.js";

export async function handOver(store: SharedStore, channels: ReadonlySet<string>): Promise<void> {
  const woken = new Set<string>();
  for (const message of await store.listUnanswered()) {
    if (message.state !== "received" || !channels.has(message.channelId)) continue;
    if (woken.has(message.channelId)) continue;
    woken.add(message.channelId);
    await store.wake(ANY_WORKER, message.id);
  }
}
