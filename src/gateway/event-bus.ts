import type { GatewayEvent } from "./events.js";
import { isStoreUnavailable } from "./store/store-unavailable-error.js";

/** A published event with its per-channel id (the SSE `id:`). */
export interface NumberedEvent {
  id: number;
  event: GatewayEvent;
}

export type EventListener = (numbered: NumberedEvent) => void;

/**
 * Where the events live when several workers share a database: `append` stores one and gives
 * its id (the same on every worker, ascending per channel), `after` reads a channel's stored
 * ones back. The events every worker appends come back through `deliver`.
 */
export interface SharedEventLog {
  /** Stores events (of one channel or several), in order, at once. */
  append(events: GatewayEvent[]): Promise<unknown>;
  after(channelId: string, after: number | undefined, limit: number): Promise<NumberedEvent[]>;
  /** Every channel's events after the global id `after`, oldest first. */
  since?(after: number, limit: number): Promise<NumberedEvent[]>;
}

interface ChannelLog {
  nextId: number;
  /**
   * With a shared log: the channel's events published and not yet stored. Such a log is never
   * dropped, or its events could come back to a log that no longer knows where it was.
   */
  appends: number;
  buffer: NumberedEvent[];
  /** The approximate bytes of each buffered event, in the buffer's order, and their sum. */
  sizes: number[];
  bytes: number;
  /** The highest id dropped from the buffer (or never buffered, being too large); 0: none. */
  droppedThrough: number;
  listeners: Set<EventListener>;
}

/**
 * Roughly the bytes an event holds: its strings' lengths and a little per other value. Walks
 * the event without serialising it, so a 20 MB text costs no 20 MB copy to measure.
 */
export function approximateBytes(value: unknown): number {
  if (typeof value === "string") return value.length + 8;
  if (value === null || typeof value !== "object") return 8;
  let total = 16;
  if (Array.isArray(value)) {
    for (const item of value) total += approximateBytes(item);
    return total;
  }
  for (const [key, item] of Object.entries(value)) total += key.length + approximateBytes(item);
  return total;
}

/**
 * The in-process event bus: one stream per channel, each event numbered
 * 1, 2, 3, ... per channel for this run of the gateway, the last
 * `bufferSize` kept (and no more than `bufferBytes` of them: an event larger than that is
 * delivered live, never kept) so a reconnecting client can resume with `Last-Event-ID`; a
 * replay that misses dropped events begins with `events_dropped`.
 * Events are not persisted: the stored messages are the record, the events
 * only show progress.
 *
 * With a `shared` log (several workers on one PostgreSQL) the ids come from the log instead,
 * so they mean the same on every worker: `publish` appends, and the events of every worker
 * (this one's too) arrive through `deliver`; `subscribe` replays from the log.
 */
export class EventBus {
  /** In order of last use, oldest first, so the oldest idle logs are dropped first. */
  readonly #channels = new Map<string, ChannelLog>();
  readonly #bufferSize: number;
  readonly #bufferBytes: number;
  readonly #maxChannels: number;
  /**
   * Names this run of the gateway in SSE ids (`<run>-<n>`), so that an id a client kept from
   * an earlier run is recognised as such rather than taken as a position in this run's stream.
   */
  readonly runId: string;
  readonly #shared: SharedEventLog | undefined;
  readonly #logger: (line: string) => void;
  /** With a shared log: the highest id delivered, of any channel. */
  #newestShared = 0;
  /** With a shared log: this worker's appends, one after the other (so in publishing order). */
  #appending = Promise.resolve();
  /** With a shared log: events published while an append was running, for the next one. */
  readonly #unshared: Array<{ log: ChannelLog; event: GatewayEvent }> = [];

  constructor(
    options: {
      bufferSize?: number;
      /** The most bytes (approximately) of events kept per channel; default 256 KiB. */
      bufferBytes?: number;
      maxChannels?: number;
      shared?: SharedEventLog;
      /** With `shared`: the log's name in SSE ids (see `runId`), the same on every worker. */
      sharedName?: string;
      logger?: (line: string) => void;
    } = {},
  ) {
    this.#bufferSize = options.bufferSize ?? 500;
    this.#bufferBytes = options.bufferBytes ?? 256 * 1024;
    this.#maxChannels = options.maxChannels ?? 256;
    this.#shared = options.shared;
    this.#logger = options.logger ?? (() => {});
    // A shared log's ids belong to no one run: every worker on the database names them alike.
    this.runId = options.shared ? (options.sharedName ?? "shared") : Date.now().toString(36);
  }

  #log(channelId: string): ChannelLog {
    let log = this.#channels.get(channelId);
    if (!log) {
      log = {
        nextId: 1,
        appends: 0,
        buffer: [],
        sizes: [],
        bytes: 0,
        droppedThrough: 0,
        listeners: new Set(),
      };
      this.#channels.set(channelId, log);
    }
    return log;
  }

  /**
   * Memory stays bounded however many channels there are: past `maxChannels`
   * logs, the least recently used ones nobody listens to (and with no append to the shared
   * log in flight) are dropped. A
   * client resuming such a channel gets its ids from 1 again, which `replay`
   * treats like an id from an earlier run: everything buffered is sent.
   */
  #touch(channelId: string, log: ChannelLog): void {
    this.#channels.delete(channelId);
    this.#channels.set(channelId, log);
    for (const [id, candidate] of this.#channels) {
      if (this.#channels.size <= this.#maxChannels) break;
      if (candidate.listeners.size > 0 || candidate.appends > 0 || id === channelId) continue;
      this.#channels.delete(id);
    }
  }

  publish(event: GatewayEvent): void {
    const shared = this.#shared;
    if (shared === undefined) {
      this.#add({ id: this.#log(event.channelId).nextId, event });
      return;
    }
    // Not delivered here but when the log announces it, in the order the log holds events
    // (another worker's event for this channel may come just before). The events published
    // while an append runs, of every channel, go in the next one together (one round trip and
    // one statement for them all), so under load a worker appends far less often than it
    // publishes.
    const log = this.#log(event.channelId);
    log.appends += 1;
    if (this.#unshared.push({ log, event }) > 1) return;
    this.#appending = this.#appending.then(() => {
      const batch = this.#unshared.splice(0);
      return shared
        .append(batch.map((item) => item.event))
        .then(
          () => undefined,
          (error: unknown) => {
            // Lost while the store is down (its health logs that once).
            if (isStoreUnavailable(error)) return;
            const reason = error instanceof Error ? error.message : String(error);
            this.#logger(`gateway: could not share channels' events: ${reason}`);
          },
        )
        .finally(() => {
          for (const item of batch) item.log.appends -= 1;
        });
    });
  }

  /**
   * An event from the shared log (this worker's or another's), delivered once: one whose id
   * the channel already passed is dropped (read again by `catchUp`).
   */
  deliver(numbered: NumberedEvent): void {
    this.#newestShared = Math.max(this.#newestShared, numbered.id);
    if (numbered.id < this.#log(numbered.event.channelId).nextId) return;
    this.#add(numbered);
  }

  #add(numbered: NumberedEvent): void {
    const log = this.#log(numbered.event.channelId);
    this.#touch(numbered.event.channelId, log);
    log.nextId = numbered.id + 1;
    this.#keep(log, numbered);
    for (const listener of log.listeners) {
      try {
        listener(numbered);
      } catch {
        // A failing subscriber (a closed socket) must not stop delivery to the others.
      }
    }
  }

  /** Buffers the event, then drops the oldest ones while past the count or the bytes. */
  #keep(log: ChannelLog, numbered: NumberedEvent): void {
    const bytes = approximateBytes(numbered.event);
    if (bytes > this.#bufferBytes) {
      log.droppedThrough = numbered.id;
    } else {
      log.buffer.push(numbered);
      log.sizes.push(bytes);
      log.bytes += bytes;
    }
    while (log.buffer.length > this.#bufferSize || log.bytes > this.#bufferBytes) {
      const dropped = log.buffer.shift();
      log.bytes -= log.sizes.shift() ?? 0;
      if (dropped) log.droppedThrough = Math.max(log.droppedThrough, dropped.id);
    }
  }

  /** How many bytes (approximately) of events the channel's buffer holds. */
  bufferedBytes(channelId: string): number {
    return this.#channels.get(channelId)?.bytes ?? 0;
  }

  /**
   * Buffered events after `lastEventId` (all buffered ones when it is
   * undefined, or when it is beyond the newest id: a client that saw a
   * previous run of the gateway), after an `events_dropped` when events it would have had
   * were dropped.
   */
  replay(channelId: string, lastEventId?: number): NumberedEvent[] {
    const log = this.#channels.get(channelId);
    if (!log) return [];
    const resumed = lastEventId !== undefined && lastEventId < log.nextId;
    const kept = resumed
      ? log.buffer.filter((numbered) => numbered.id > lastEventId)
      : [...log.buffer];
    if (log.droppedThrough <= (resumed ? lastEventId : 0)) return kept;
    const gap: NumberedEvent = {
      id: log.droppedThrough,
      event: {
        type: "events_dropped",
        channelId,
        through: log.droppedThrough,
        resumed,
        reason: `events up to ${log.droppedThrough} are no longer kept in memory (the last ${this.#bufferSize} events and ${Math.round(this.#bufferBytes / 1024)} KiB are); the stored messages have what they said`,
      },
    };
    return [gap, ...kept];
  }

  /**
   * Replays, then delivers live events, with no gap and no repeat between the two. Returns the
   * unsubscribe. With a shared log the replay is read from it (the live events meanwhile
   * wait), or from this worker's buffer when the log cannot be read.
   */
  subscribe(channelId: string, listener: EventListener, lastEventId?: number): () => void {
    const shared = this.#shared;
    if (shared === undefined) {
      for (const numbered of this.replay(channelId, lastEventId)) listener(numbered);
      return this.listen(channelId, listener);
    }
    let open = true;
    let waiting: NumberedEvent[] | undefined = [];
    let passed = lastEventId ?? 0;
    const send = (numbered: NumberedEvent) => {
      if (!open || numbered.id <= passed) return;
      passed = numbered.id;
      listener(numbered);
    };
    const unsubscribe = this.listen(channelId, (numbered) => {
      if (waiting) waiting.push(numbered);
      else send(numbered);
    });
    void shared
      .after(channelId, lastEventId, this.#bufferSize)
      .catch(() => this.replay(channelId, lastEventId))
      .then((history) => {
        const live = waiting ?? [];
        waiting = undefined;
        for (const numbered of [...history, ...live]) send(numbered);
      });
    return () => {
      open = false;
      unsubscribe();
    };
  }

  /**
   * After the shared log's announcements were missed (its connection lost), reads what every
   * channel got meanwhile and delivers it: each channel this bus has a log of from where it
   * stopped (a channel's events commit in id order), then the events of any other channel
   * after the newest id seen here (channels that began during the gap).
   */
  async catchUp(): Promise<void> {
    const shared = this.#shared;
    if (shared === undefined) return;
    const known = new Map<string, number>();
    for (const [channelId, log] of this.#channels) {
      // A log with nothing delivered and nobody listening has nothing to resume from.
      if (log.nextId > 1 || log.listeners.size > 0) known.set(channelId, log.nextId);
    }
    const newest = this.#newestShared;
    for (const [channelId, nextId] of known) {
      const missed = await shared.after(channelId, nextId - 1, this.#bufferSize).catch(() => []);
      for (const numbered of missed) this.deliver(numbered);
    }
    if (shared.since === undefined || newest === 0) return;
    for (let after = newest; ; ) {
      const page = await shared.since(after, this.#bufferSize).catch(() => []);
      for (const numbered of page) {
        if (!known.has(numbered.event.channelId)) this.deliver(numbered);
      }
      const last = page.at(-1);
      if (last === undefined || page.length < this.#bufferSize) return;
      after = last.id;
    }
  }

  /** Delivers the channel's events from now on, replaying none. Returns the unsubscribe. */
  listen(channelId: string, listener: EventListener): () => void {
    const log = this.#log(channelId);
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
