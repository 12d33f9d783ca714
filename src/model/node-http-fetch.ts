import {
  type Agent,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { Readable } from "node:stream";
import { LightHeaders } from "./light-headers.js";
import { NodeHttpResponse } from "./node-http-response.js";

/**
 * A `fetch` for the Anthropic SDK over `node:http`. Node's global fetch
 * compiles a WebAssembly HTTP parser on first use, which costs a CLI started
 * for one request about a fifth of its time and 20 MB of memory; the SDK
 * takes its transport as an option, so it gets this one. It implements what
 * the SDK uses: method, headers, a string or byte body, an AbortSignal, and a
 * streamed response body. Connection failures reject with a `TypeError` whose
 * `cause` is the socket error, as fetch does, so the SDK reports them alike.
 * It never touches the global `Request`, `Response` or `Headers`, whose first
 * use loads the fetch implementation after all (see `light-headers.ts`).
 */
const httpAgent = new HttpAgent({ keepAlive: true });

interface Transport {
  agent: Agent;
  send: (url: URL, options: RequestOptions) => ReturnType<typeof httpRequest>;
}

let httpsTransport: Transport | undefined;

/** `node:https` loads TLS and OpenSSL's bindings (~3 MB), so only an https URL loads it. */
async function transportFor(url: URL): Promise<Transport> {
  if (url.protocol !== "https:") return { agent: httpAgent, send: httpRequest };
  if (httpsTransport === undefined) {
    const https = await import("node:https");
    httpsTransport = { agent: new https.Agent({ keepAlive: true }), send: https.request };
  }
  return httpsTransport;
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("This operation was aborted", "AbortError");
}

function responseHeaders(message: IncomingMessage): LightHeaders {
  const headers = new LightHeaders();
  for (const [name, value] of Object.entries(message.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

async function requestBody(body: unknown): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  // Anything else the SDK might hand over (a stream, a Blob): let Response read it.
  return new Uint8Array(
    await new Response(body as ConstructorParameters<typeof Response>[0]).arrayBuffer(),
  );
}

export const nodeHttpFetch = (async (
  input: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortError(signal);
  const body = await requestBody(init.body);
  const headers = Object.fromEntries(
    new LightHeaders(init.headers as ConstructorParameters<typeof LightHeaders>[0]).entries(),
  );
  const { agent, send } = await transportFor(url);
  // An abort during the awaits above fired no listener, and a listener added now never fires.
  if (signal?.aborted) throw abortError(signal);

  // A kept-alive connection the server closed as it idled can fail the next request before
  // the server saw it (ECONNRESET on a reused socket): that request is sent again, once, on a
  // fresh connection, as Node's documentation advises. Nothing was processed, so it is safe.
  const attempt = (retried: boolean): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const outgoing = send(url, { method: init.method ?? "GET", headers, agent });
      let received: IncomingMessage | undefined;
      // Once the response has begun, its body stream carries the abort to the reader.
      const onAbort = () => (received ?? outgoing).destroy(abortError(signal as AbortSignal));
      signal?.addEventListener("abort", onAbort, { once: true });
      outgoing.on("error", (error: NodeJS.ErrnoException) => {
        signal?.removeEventListener("abort", onAbort);
        const stale = outgoing.reusedSocket && error.code === "ECONNRESET";
        if (stale && !retried && received === undefined && signal?.aborted !== true) {
          resolve(attempt(true));
          return;
        }
        reject(
          error.name === "AbortError" ? error : new TypeError("fetch failed", { cause: error }),
        );
      });
      outgoing.on("response", (incoming) => {
        received = incoming;
        incoming.on("close", () => signal?.removeEventListener("abort", onAbort));
        const status = incoming.statusCode ?? 0;
        const empty = status === 204 || status === 304 || init.method === "HEAD";
        resolve(
          new NodeHttpResponse(
            empty ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>),
            {
              status,
              statusText: incoming.statusMessage ?? "",
              headers: responseHeaders(incoming),
              url: url.href,
            },
          ),
        );
      });
      outgoing.end(body);
    });
  return attempt(false);
}) as typeof globalThis.fetch;
