/**
 * One HTTP request to the Messages API over `node:http` (or `node:https`, loaded only for an
 * https URL: it brings TLS and OpenSSL's bindings), answering with the status, the headers and
 * the body as text chunks. Node's global fetch is not used: its first use compiles a WebAssembly
 * HTTP parser and loads web streams, about a fifth of what a one-shot `rudder run` costs.
 *
 * Failures reject: an abort with an `AbortError`, a socket failure with the socket's error
 * (`connect ECONNREFUSED ...`), no answer within `timeoutMs` with an `ApiConnectionError`
 * ("Request timed out."). A kept-alive connection the server closed as it idled can fail the
 * next request before the server saw it (ECONNRESET on a reused socket): that request is sent
 * again, once, on a fresh connection, as Node's documentation advises; nothing was processed.
 */
import {
  type Agent,
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { ApiConnectionError } from "./api-error.js";
import type { HeaderReader } from "./retry-policy.js";

export interface HttpAnswer {
  status: number;
  header: HeaderReader;
  /** The body as text; reading it to the end (or `cancel`) frees the connection. */
  body: AsyncIterable<string>;
  /** Stops reading: the connection is closed, not reused. */
  cancel(): void;
}

export interface HttpCall {
  url: URL;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** Until the answer starts; the body may take longer. */
  timeoutMs: number;
}

interface Transport {
  agent: Agent;
  send: (url: URL, options: RequestOptions) => ClientRequest;
}

let httpTransport: Transport | undefined;
let httpsTransport: Transport | undefined;

async function transportFor(url: URL): Promise<Transport> {
  if (url.protocol !== "https:") {
    httpTransport ??= { agent: new HttpAgent({ keepAlive: true }), send: httpRequest };
    return httpTransport;
  }
  if (httpsTransport === undefined) {
    const https = await import("node:https");
    httpsTransport = { agent: new https.Agent({ keepAlive: true }), send: https.request };
  }
  return httpsTransport;
}

export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("This operation was aborted", "AbortError");
}

function headerReader(message: IncomingMessage): HeaderReader {
  return (name) => {
    const value = message.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(", ") : value;
  };
}

/** Sends `call` and resolves once the answer's status and headers are in. */
export async function sendHttp(call: HttpCall): Promise<HttpAnswer> {
  const { url, signal } = call;
  if (signal.aborted) throw abortError(signal);
  const { agent, send } = await transportFor(url);
  // An abort during the await above fired no listener, and a listener added now never fires.
  if (signal.aborted) throw abortError(signal);
  const headers = { ...call.headers, "content-length": String(Buffer.byteLength(call.body)) };

  const attempt = (retried: boolean): Promise<HttpAnswer> =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const outgoing = send(url, { method: "POST", headers, agent });
      let received: IncomingMessage | undefined;
      const timer = setTimeout(
        () => outgoing.destroy(new ApiConnectionError("Request timed out.")),
        call.timeoutMs,
      );
      // Once the answer has begun, its body carries the abort to the reader.
      const onAbort = () => (received ?? outgoing).destroy(abortError(signal));
      signal.addEventListener("abort", onAbort, { once: true });
      outgoing.on("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        const stale = outgoing.reusedSocket && error.code === "ECONNRESET";
        if (stale && !retried && received === undefined && !signal.aborted) {
          resolve(attempt(true));
          return;
        }
        reject(error);
      });
      outgoing.on("response", (incoming: IncomingMessage) => {
        clearTimeout(timer);
        received = incoming;
        incoming.on("close", () => signal.removeEventListener("abort", onAbort));
        incoming.setEncoding("utf8");
        resolve({
          status: incoming.statusCode ?? 0,
          header: headerReader(incoming),
          body: incoming,
          cancel: () => incoming.destroy(),
        });
      });
      outgoing.end(call.body);
    });
  return attempt(false);
}
