import type { GatewayEvent } from "./events.js";

/** A published event with its per-channel id (the SSE `id:`). */
export interface NumberedEvent {
  id: number;
  event: GatewayEvent;
}

export type EventListener = (numbered: NumberedEvent) => void;

interface ChannelLog {
  nextId: number;
  buffer: NumberedEvent[];
  listeners: Set<EventListener>;
}

/**
 * The in-process event bus: one stream per channel, each event numbered
 * 1, 2, 3, ... per channel for this run of the gateway, the last
 * `bufferSize` kept so a reconnecting client can resume with `Last-Event-ID`.
 * Events are not persisted: the stored messages are the record, the events
 * only show progress.
 */
export class EventBus {
  /** In order of last use, oldest first, so the oldest idle logs are dropped first. */
  readonly #channels = new Map<string, ChannelLog>();
  readonly #bufferSize: number;
  readonly #maxChannels: number;
  /**
   * Names this run of the gateway in SSE ids (`<run>-<n>`), so that an id a client kept from
   * an earlier run is recognised as such rather than taken as a position in this run's stream.
   */
  readonly runId = Date.now().toString(36);

  constructor(options: { bufferSize?: number; maxChannels?: number } = {}) {
    this.#bufferSize = options.bufferSize ?? 500;
    this.#maxChannels = options.maxChannels ?? 256;
  }

  #log(channelId: string): ChannelLog {
    let log = this.#channels.get(channelId);
    if (!log) {
      log = { nextId: 1, buffer: [], listeners: new Set() };
      this.#channels.set(channelId, log);
    }
    return log;
  }

  /**
   * Memory stays bounded however many channels there are: past `maxChannels`
   * logs, the least recently used ones nobody listens to are dropped. A
   * client resuming such a channel gets its ids from 1 again, which `replay`
   * treats like an id from an earlier run: everything buffered is sent.
   */
  #touch(channelId: string, log: ChannelLog): void {
    this.#channels.delete(channelId);
    this.#channels.set(channelId, log);
    for (const [id, candidate] of this.#channels) {
      if (this.#channels.size <= this.#maxChannels) break;
      if (candidate.listeners.size === 0 && id !== channelId) this.#channels.delete(id);
    }
  }

  publish(event: GatewayEvent): NumberedEvent {
    const log = this.#log(event.channelId);
    this.#touch(event.channelId, log);
    const numbered = { id: log.nextId, event };
    log.nextId += 1;
    log.buffer.push(numbered);
    if (log.buffer.length > this.#bufferSize) log.buffer.shift();
    for (const listener of log.listeners) {
      try {
        listener(numbered);
      } catch {
        // A failing subscriber (a closed socket) must not stop delivery to the others.
      }
    }
    return numbered;
  }

  /**
   * Buffered events after `lastEventId` (all buffered ones when it is
   * undefined, or when it is beyond the newest id: a client that saw a
   * previous run of the gateway).
   */
  replay(channelId: string, lastEventId?: number): NumberedEvent[] {
    const log = this.#channels.get(channelId);
    if (!log) return [];
    if (lastEventId === undefined || lastEventId >= log.nextId) return [...log.buffer];
    return log.buffer.filter((numbered) => numbered.id > lastEventId);
  }

  /** Replays, then delivers live events, with no gap between the two. Returns the unsubscribe. */
  subscribe(channelId: string, listener: EventListener, lastEventId?: number): () => void {
    const log = this.#log(channelId);
    for (const numbered of this.replay(channelId, lastEventId)) listener(numbered);
    log.listeners.add(listener);
    return () => {
      log.listeners.delete(listener);
    };
  }

  /** How many channels have a log in memory. */
  channelCount(): number {
    return this.#channels.size;
  }

  listenerCount(channelId: string): number {
    return this.#channels.get(channelId)?.listeners.size ?? 0;
  }
}
