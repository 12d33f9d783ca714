import type { ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { EventBus, NumberedEvent } from "../event-bus.js";
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
  /** How far behind its client may read before it is cut off; default `MAX_UNREAD_BYTES`. */
  maxUnreadBytes?: number;
}

/**
 * A client that reads this far behind (bytes written and not yet taken by its socket) is cut
 * off, what it had not read dropped with the socket; it resumes with `Last-Event-ID`. More
 * than the largest event (a reply under the agent line cap).
 */
export const MAX_UNREAD_BYTES = 64 * 2 ** 20;

const encoder = new TextEncoder();
/** An event stream's response headers. */
const STREAM_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
};
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
 *
 * The frames are written straight to Node's response (the one @hono/node-server passes as
 * `env.outgoing`), each as the shared buffer it is, with no copy per stream and no stream
 * machinery per frame. The frames of a turn of the event loop and of the next are written
 * together, in one system call: so a turn's events and the answer its commit publishes (SQLite
 * commits at the end of the loop turn) reach the client at once, not in three or four writes.
 */
export function channelEvents(context: Context, options: SseOptions): Response {
  const outgoing = (context.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (outgoing === undefined) throw new Error("event streams need @hono/node-server");
  // A HEAD gets the stream's headers and no stream: written straight to the socket, a stream
  // would leave the answer open (the next request on the connection never answered) and the
  // adapter's own HEAD answer would fail on headers already sent.
  if (context.req.method === "HEAD") return new Response(null, { headers: STREAM_HEADERS });
  const lastEventId = parseEventId(
    context.req.header("last-event-id") ?? context.req.query("lastEventId"),
    options.bus.runId,
  );
  const place = options.limits.acquire(options.client);
  if ("refused" in place) {
    context.header("retry-after", "5");
    return context.json({ error: place.refused }, 503);
  }
  streamEvents(outgoing, options, lastEventId, place.release);
  return RESPONSE_ALREADY_SENT;
}

function streamEvents(
  outgoing: ServerResponse,
  options: SseOptions,
  lastEventId: number | undefined,
  release: () => void,
): void {
  outgoing.writeHead(200, STREAM_HEADERS);
  const maxUnread = options.maxUnreadBytes ?? MAX_UNREAD_BYTES;
  let pending: Uint8Array[] = [];
  const flush = () => {
    const frames = pending;
    pending = [];
    if (outgoing.destroyed || outgoing.writableEnded) return;
    if (outgoing.writableLength > maxUnread) {
      outgoing.destroy();
      return;
    }
    outgoing.cork();
    for (const frame of frames) outgoing.write(frame);
    outgoing.uncork();
  };
  const write = (bytes: Uint8Array) => {
    if (pending.length === 0) setImmediate(() => setImmediate(flush));
    pending.push(bytes);
  };
  // Each event's frame is one buffer shared by every stream of the fan-out (`eventFrame`).
  const send = (numbered: NumberedEvent) => write(eventFrame(numbered, options.bus.runId));
  outgoing.write(": connected\n\n");
  const unsubscribe = options.bus.subscribe(options.channelId, send, lastEventId);
  const heartbeat = setInterval(() => write(ping), options.heartbeatMs);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    options.closing.removeEventListener("abort", end);
    unsubscribe();
    release();
    flush();
    if (!outgoing.writableEnded) outgoing.end();
  };
  outgoing.once("close", end);
  outgoing.once("error", end);
  if (options.closing.aborted) end();
  else options.closing.addEventListener("abort", end, { once: true });
}
