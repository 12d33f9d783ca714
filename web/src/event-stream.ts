import type { GatewayEvent } from "./types.js";

export type StreamStatus = "connecting" | "open" | "reconnecting" | "closed";

export interface EventStreamHandlers {
  onEvent: (event: GatewayEvent) => void;
  onStatus: (status: StreamStatus) => void;
}

/**
 * One channel's Server-Sent Events. After a network break the browser
 * reconnects by itself and sends `Last-Event-ID`, so the gateway resumes
 * where the stream broke. `closed` means the gateway refused the stream
 * (the browser will not retry); the caller decides whether to open a new one.
 */
export class EventStream {
  private readonly source: EventSource;

  constructor(url: string, handlers: EventStreamHandlers) {
    handlers.onStatus("connecting");
    this.source = new EventSource(url);
    this.source.onopen = () => handlers.onStatus("open");
    this.source.onerror = () => {
      handlers.onStatus(this.source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
    };
    this.source.onmessage = (message: MessageEvent<string>) => {
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
    // A frame that is not an event (a keep-alive, a corrupt frame) is skipped.
  }
  return null;
}
