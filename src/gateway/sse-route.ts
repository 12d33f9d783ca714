import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { EventBus, NumberedEvent } from "./event-bus.js";

export interface SseOptions {
  bus: EventBus;
  channelId: string;
  /** Ends the stream when the gateway shuts down. */
  closing: AbortSignal;
  heartbeatMs: number;
}

/**
 * The position to resume after, from a `Last-Event-ID` of the form `<run>-<n>`: undefined (so
 * everything buffered is replayed) when it is missing, malformed or from another run of the
 * gateway, whose numbering means nothing in this one.
 */
function parseEventId(value: string | undefined | null, runId: string): number | undefined {
  const match = /^([0-9a-z]+)-(\d+)$/.exec(value?.trim() ?? "");
  if (match === null || match[1] !== runId) return undefined;
  const position = Number(match[2]);
  return Number.isSafeInteger(position) ? position : undefined;
}

/**
 * A channel's events as Server-Sent Events: each event one `data:` line of
 * JSON (a `GatewayEvent`) with its per-channel `id:` (`<run>-<n>`), no `event:` field (so a
 * page reads them all with `onmessage`). `Last-Event-ID` (header, or the
 * `lastEventId` query parameter) resumes after that id from the bus's ring
 * buffer; without it the buffered events are replayed first. A comment line
 * every `heartbeatMs` keeps proxies from closing an idle stream.
 */
export function channelEvents(context: Context, options: SseOptions): Response {
  const lastEventId = parseEventId(
    context.req.header("last-event-id") ?? context.req.query("lastEventId"),
    options.bus.runId,
  );
  return streamSSE(context, async (stream) => {
    let chain = Promise.resolve();
    const send = (numbered: NumberedEvent) => {
      chain = chain
        .then(() =>
          stream.writeSSE({
            id: `${options.bus.runId}-${numbered.id}`,
            data: JSON.stringify(numbered.event),
          }),
        )
        .catch(() => undefined);
    };
    let onClosing = () => {};
    const ended = new Promise<void>((resolve) => {
      onClosing = resolve;
      stream.onAbort(resolve);
      if (options.closing.aborted) resolve();
      options.closing.addEventListener("abort", onClosing, { once: true });
    });
    await stream.write(": connected\n\n");
    const unsubscribe = options.bus.subscribe(options.channelId, send, lastEventId);
    const heartbeat = setInterval(() => {
      chain = chain
        .then(() => stream.write(": ping\n\n"))
        .then(
          () => undefined,
          () => undefined,
        );
    }, options.heartbeatMs);
    try {
      await ended;
    } finally {
      clearInterval(heartbeat);
      options.closing.removeEventListener("abort", onClosing);
      unsubscribe();
      await chain;
    }
  });
}
