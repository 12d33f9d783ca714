import type { GatewayEvent } from "./types.js";

export type StreamStatus = "connecting" | "open" | "reconnecting" | "closed";

export interface EventStreamHandlers {
  onEvent: (event: GatewayEvent) => void;
  onStatus: (status: StreamStatus) => void;
}

/**
 * One channel's Server-Sent Events. The browser reconnects by itself and
 * sends `Last-Event-ID`, so the gateway resumes where the stream broke; an
 * event id seen twice (a resume that overlaps) is applied once.
 */
export class EventStream {
  private readonly source: EventSource;
  private readonly seen = new Set<string>();

  constructor(url: string, handlers: EventStreamHandlers) {
    handlers.onStatus("connecting");
    this.source = new EventSource(url);
    this.source.onopen = () => handlers.onStatus("open");
    this.source.onerror = () => {
      handlers.onStatus(this.source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
    };
    this.source.onmessage = (message: MessageEvent<string>) => {
      if (message.lastEventId) {
        if (this.seen.has(message.lastEventId)) return;
        this.seen.add(message.lastEventId);
      }
      const event = parseEvent(message.data);
      if (event) handlers.onEvent(event);
    };
  }

  close(): void {
    this.source.close();
  }
}

function parseEvent(data: string): GatewayEvent | null {
  try {
    const value: unknown = JSON.parse(data);
    if (
      value &&
      typeof value === "object" &&
      typeof (value as { type?: unknown }).type === "string"
    ) {
      return value as GatewayEvent;
    }
  } catch {
    // A line that is not an event (a keep-alive, a corrupt frame) is skipped.
  }
  return null;
}
