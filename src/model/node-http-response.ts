import { LightHeaders } from "./light-headers.js";

export interface NodeHttpResponseInit {
  status: number;
  statusText: string;
  headers: LightHeaders;
  url: string;
}

/**
 * The `Response` that `nodeHttpFetch` resolves with: the standard's fields and body readers over
 * a web `ReadableStream`, without the global `Response`, whose first use loads Node's whole fetch
 * implementation (see `light-headers.ts` for what that costs). Each body reader may be called
 * once, as with fetch; `clone()` tees the body. `formData()` is not offered: the Messages API
 * never answers with a form.
 */
export class NodeHttpResponse implements Response {
  readonly status: number;
  readonly statusText: string;
  readonly headers: LightHeaders;
  readonly url: string;
  readonly redirected = false;
  readonly type = "basic" as const;
  #body: ReadableStream<Uint8Array> | null;
  #used = false;

  constructor(body: ReadableStream<Uint8Array> | null, init: NodeHttpResponseInit) {
    this.#body = body;
    this.status = init.status;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.url = init.url;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#body;
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    if (this.#body === null) return new Uint8Array(0);
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.#body as unknown as AsyncIterable<Uint8Array>) {
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    const type = this.headers.get("content-type") ?? "";
    return new Blob([await this.bytes()], { type });
  }

  async formData(): Promise<FormData> {
    throw new TypeError("NodeHttpResponse: formData() is not supported");
  }

  clone(): NodeHttpResponse {
    if (this.#used) throw new TypeError("Response.clone: Body has already been consumed");
    let copy: ReadableStream<Uint8Array> | null = null;
    if (this.#body !== null) {
      const [mine, theirs] = this.#body.tee();
      this.#body = mine;
      copy = theirs;
    }
    return new NodeHttpResponse(copy, {
      status: this.status,
      statusText: this.statusText,
      headers: new LightHeaders(this.headers),
      url: this.url,
    });
  }
}
