import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { EventBus, NumberedEvent } from "./event-bus.js";
import type { StreamLimits } from "./stream-limits.js";

export interface SseOptions {
  bus: EventBus;
  channelId: string;
  /** Ends the stream when the gateway shuts down. */
  closing: AbortSignal;
  heartbeatMs: number;
  /** The caps on open streams; past them the answer is a 503 saying which. */
  limits: StreamLimits;
  /** The client's address, for the per-client cap. */
  client: string;
}

const encoder = new TextEncoder();
const ping = encoder.encode(": ping\n\n");

/**
 * Each event's SSE frame, encoded once and shared by every stream that sends it (a socket
 * keeps a reference, not a copy), so a fan-out to N streams does not hold N copies.
 */
const frames = new WeakMap<NumberedEvent, Uint8Array>();

function eventFrame(numbered: NumberedEvent, runId: string): Uint8Array {
  let frame = frames.get(numbered);
  if (frame === undefined) {
    const data = JSON.stringify(numbered.event);
    frame = encoder.encode(`id: ${runId}-${numbered.id}\ndata: ${data}\n\n`);
    frames.set(numbered, frame);
  }
  return frame;
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
 * every `heartbeatMs` keeps proxies from closing an idle stream. Past `limits` (in all, or
 * from this client) the answer is a 503 `{error}` with `Retry-After`. When the client goes,
 * its subscription, heartbeat and place are given back.
 */
export function channelEvents(context: Context, options: SseOptions): Response {
  const lastEventId = parseEventId(
    context.req.header("last-event-id") ?? context.req.query("lastEventId"),
    options.bus.runId,
  );
  const place = options.limits.acquire(options.client);
  if ("refused" in place) {
    context.header("retry-after", "5");
    return context.json({ error: place.refused }, 503);
  }
  return streamSSE(context, async (stream) => {
    try {
      await streamEvents(stream, options, lastEventId, place.release);
    } finally {
      place.release();
    }
  });
}

async function streamEvents(
  stream: SSEStreamingApi,
  options: SseOptions,
  lastEventId: number | undefined,
  release: () => void,
): Promise<void> {
  let chain = Promise.resolve();
  const write = (bytes: Uint8Array) => {
    chain = chain
      .then(() => stream.write(bytes))
      .then(
        () => undefined,
        () => undefined,
      );
  };
  // Each event's frame is one buffer shared by every stream of the fan-out (`eventFrame`), so it
  // is written as it is: joining a loop turn's frames into one write per stream would save
  // system calls but copy them for each of thousands of streams (+48 MiB at the peak of 3,000,
  // and not given back: bench/sse-flood.ts).
  const send = (numbered: NumberedEvent) => write(eventFrame(numbered, options.bus.runId));
  let onClosing = () => {};
  const ended = new Promise<void>((resolve) => {
    onClosing = resolve;
    stream.onAbort(resolve);
    if (options.closing.aborted) resolve();
    options.closing.addEventListener("abort", onClosing, { once: true });
  });
  await stream.write(": connected\n\n");
  const unsubscribe = options.bus.subscribe(options.channelId, send, lastEventId);
  const heartbeat = setInterval(() => write(ping), options.heartbeatMs);
  try {
    await ended;
  } finally {
    clearInterval(heartbeat);
    options.closing.removeEventListener("abort", onClosing);
    unsubscribe();
    release();
    await chain;
  }
}
