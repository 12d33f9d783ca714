import type { ChatPlatform } from "./chat-platform.js";

/** Platforms show "typing..." for about five seconds per call. */
const REPEAT_MS = 4500;
/** A turn that runs longer stops showing it; the reply still comes. */
const MAX_MS = 10 * 60_000;

/**
 * "typing..." in a channel while its agent works: from the delivery of a message until the
 * channel is answered (`stop`). Best effort: a failed call is ignored, as the indicator is a
 * courtesy, not a message.
 */
export class TypingIndicator {
  readonly #platform: ChatPlatform;
  readonly #signal: AbortSignal;
  readonly #channels = new Map<string, { timer: NodeJS.Timeout; since: number }>();

  constructor(platform: ChatPlatform, signal: AbortSignal) {
    this.#platform = platform;
    this.#signal = signal;
    signal.addEventListener("abort", () => this.stopAll(), { once: true });
  }

  start(channelId: string): void {
    if (this.#signal.aborted) return;
    const running = this.#channels.get(channelId);
    if (running) {
      running.since = Date.now();
      return;
    }
    const entry = { timer: setInterval(() => this.#tick(channelId), REPEAT_MS), since: Date.now() };
    entry.timer.unref();
    this.#channels.set(channelId, entry);
    this.#send(channelId);
  }

  stop(channelId: string): void {
    const running = this.#channels.get(channelId);
    if (!running) return;
    clearInterval(running.timer);
    this.#channels.delete(channelId);
  }

  stopAll(): void {
    for (const channelId of [...this.#channels.keys()]) this.stop(channelId);
  }

  #tick(channelId: string): void {
    const running = this.#channels.get(channelId);
    if (running && Date.now() - running.since > MAX_MS) this.stop(channelId);
    else this.#send(channelId);
  }

  #send(channelId: string): void {
    this.#platform.typing(channelId).catch(() => undefined);
  }
}
