// A load generator for the gateway benches that is cheap on a 2-core machine, where its
// processor time is taken from the gateway's: HTTP/1.1 written and read straight on keep-alive
// sockets (a POST is one write of bytes mostly made once, its answer found by its
// Content-Length), and one SSE socket per channel whose frames are only parsed when they may be
// the awaited reply. `node:http` spent 0.34 ms of processor a message here (its parser, streams
// and agent bookkeeping), a third of what the gateway itself spends.
import net from "node:net";
import { performance } from "node:perf_hooks";

export interface Endpoint {
  url: string;
  token: string;
}

/** The parts of an endpoint's URL a socket and a request line need. */
function target(endpoint: Endpoint) {
  const url = new URL(endpoint.url);
  return { host: url.hostname, port: Number(url.port), authority: url.host };
}

const HEADER_END = Buffer.from("\r\n\r\n");

/** One keep-alive connection to a gateway: one request at a time, its answer read whole. */
class Connection {
  readonly #socket: net.Socket;
  #buffered: Buffer = Buffer.alloc(0);
  #answer: ((response: { status: number; text: string }) => void) | undefined;
  #failed: ((error: Error) => void) | undefined;
  /** Whether the socket is gone (the server ends a keep-alive connection idle for 5 s). */
  closed = false;

  constructor(host: string, port: number) {
    this.#socket = net.connect({ host, port, noDelay: true });
    this.#socket.on("data", (chunk: Buffer) => {
      this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
      this.#read();
    });
    const fail = (error: Error) => {
      const failed = this.#failed;
      this.#answer = this.#failed = undefined;
      failed?.(error);
    };
    this.#socket.on("error", fail);
    this.#socket.on("close", () => {
      this.closed = true;
      fail(new Error("the gateway closed the connection"));
    });
  }

  request(head: string, body: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error("the connection is closed"));
        return;
      }
      this.#answer = resolve;
      this.#failed = reject;
      this.#socket.write(head + body);
    });
  }

  #read(): void {
    const end = this.#buffered.indexOf(HEADER_END);
    if (end === -1) return;
    const head = this.#buffered.toString("latin1", 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (length === null) {
      this.#socket.destroy(new Error(`an answer without Content-Length: ${head}`));
      return;
    }
    const bodyStart = end + HEADER_END.length;
    const bodyEnd = bodyStart + Number(length[1]);
    if (this.#buffered.length < bodyEnd) return;
    const text = this.#buffered.toString("utf8", bodyStart, bodyEnd);
    this.#buffered = this.#buffered.subarray(bodyEnd);
    const answer = this.#answer;
    this.#answer = this.#failed = undefined;
    answer?.({ status: Number(head.slice(9, 12)), text });
  }

  destroy(): void {
    this.#socket.destroy();
  }
}

/** Keep-alive connections to the gateways, reused between requests. */
export class Connections {
  readonly #idle = new Map<string, Connection[]>();
  readonly #all: Connection[] = [];

  async use<T>(endpoint: Endpoint, run: (connection: Connection) => Promise<T>): Promise<T> {
    const { host, port } = target(endpoint);
    const key = `${host}:${port}`;
    const idle = this.#idle.get(key) ?? [];
    this.#idle.set(key, idle);
    let connection = idle.pop();
    while (connection?.closed) connection = idle.pop();
    if (connection === undefined) {
      connection = new Connection(host, port);
      this.#all.push(connection);
    }
    const result = await run(connection);
    idle.push(connection);
    return result;
  }

  destroy(): void {
    for (const connection of this.#all) connection.destroy();
  }
}

/** POSTs JSON and resolves with the status and parsed body. */
export function postJson(
  endpoint: Endpoint,
  path: string,
  body: unknown,
  connections: Connections,
): Promise<{ status: number; body: unknown }> {
  const payload = JSON.stringify(body);
  const head =
    `POST ${path} HTTP/1.1\r\nhost: ${target(endpoint).authority}\r\n` +
    `authorization: Bearer ${endpoint.token}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(payload)}\r\n\r\n`;
  return connections.use(endpoint, async (connection) => {
    const { status, text } = await connection.request(head, payload);
    return { status, body: JSON.parse(text) as unknown };
  });
}

/**
 * One channel's event stream on one gateway. `reply(messageId)` resolves with the time
 * (performance.now()) its `reply` event arrived, whether it came before or after the call.
 * The stream's chunked body is taken apart here (each chunk its size line, then its bytes).
 */
export class ReplyStream {
  readonly #endpoint: Endpoint;
  readonly #channelId: string;
  #socket: net.Socket | undefined;
  /** Bytes not yet taken apart: the head, then chunk size lines and chunks. */
  #raw: Buffer = Buffer.alloc(0);
  #headRead = false;
  /** The stream's text so far that is not yet a whole frame. */
  #buffered = "";
  readonly #arrived = new Map<string, number>();
  readonly #waiting = new Map<string, (at: number) => void>();

  constructor(endpoint: Endpoint, channelId: string) {
    this.#endpoint = endpoint;
    this.#channelId = channelId;
  }

  open(): Promise<void> {
    const { host, port, authority } = target(this.#endpoint);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port, noDelay: true });
      this.#socket = socket;
      let connected = false;
      socket.on("error", (error) => {
        if (!connected) reject(error);
      });
      socket.write(
        `GET /api/channels/${this.#channelId}/events HTTP/1.1\r\nhost: ${authority}\r\n` +
          `authorization: Bearer ${this.#endpoint.token}\r\n\r\n`,
      );
      socket.on("data", (chunk: Buffer) => {
        this.#raw = this.#raw.length === 0 ? chunk : Buffer.concat([this.#raw, chunk]);
        if (!this.#headRead) {
          const end = this.#raw.indexOf(HEADER_END);
          if (end === -1) return;
          const head = this.#raw.toString("latin1", 0, end);
          if (!head.startsWith("HTTP/1.1 200")) {
            reject(new Error(`event stream answered ${head.split("\r\n")[0]}`));
            socket.destroy();
            return;
          }
          if (!/\r\ntransfer-encoding: *chunked/i.test(head)) {
            reject(new Error("the event stream is not chunked"));
            socket.destroy();
            return;
          }
          this.#headRead = true;
          this.#raw = this.#raw.subarray(end + HEADER_END.length);
        }
        this.#chunks();
        if (!connected && this.#buffered.includes(": connected")) {
          connected = true;
          resolve();
        }
        this.#frames();
      });
    });
  }

  /** Moves each whole chunk's bytes to the text being read. */
  #chunks(): void {
    for (;;) {
      const lineEnd = this.#raw.indexOf("\r\n");
      if (lineEnd === -1) return;
      const size = Number.parseInt(this.#raw.toString("latin1", 0, lineEnd), 16);
      const start = lineEnd + 2;
      if (this.#raw.length < start + size + 2) return;
      this.#buffered += this.#raw.toString("utf8", start, start + size);
      this.#raw = this.#raw.subarray(start + size + 2);
    }
  }

  #frames(): void {
    let end = this.#buffered.indexOf("\n\n");
    while (end !== -1) {
      const frame = this.#buffered.slice(0, end);
      this.#buffered = this.#buffered.slice(end + 2);
      if (frame.includes('"type":"reply"')) {
        const data = frame.slice(frame.indexOf("data: ") + 6);
        const event = JSON.parse(data) as { message: { replyTo: string | null } };
        const replyTo = event.message.replyTo;
        if (replyTo !== null) this.#arrive(replyTo, performance.now());
      }
      end = this.#buffered.indexOf("\n\n");
    }
  }

  #arrive(messageId: string, at: number): void {
    const waiter = this.#waiting.get(messageId);
    if (waiter) {
      this.#waiting.delete(messageId);
      waiter(at);
    } else this.#arrived.set(messageId, at);
  }

  reply(messageId: string, timeoutMs = 60_000): Promise<number> {
    const at = this.#arrived.get(messageId);
    if (at !== undefined) {
      this.#arrived.delete(messageId);
      return Promise.resolve(at);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(messageId);
        reject(new Error(`no reply to ${messageId} on ${this.#channelId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting.set(messageId, (arrivedAt) => {
        clearTimeout(timer);
        resolve(arrivedAt);
      });
    });
  }

  close(): void {
    this.#socket?.destroy();
  }
}

/** Processor time (user + system) of a process so far, in milliseconds, from /proc. */
export async function cpuMs(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** Processes under `root` (any depth) whose command name is `name`, from /proc. */
export async function descendantsNamed(root: number, name: string): Promise<number[]> {
  const { readdir, readFile } = await import("node:fs/promises");
  const parents = new Map<number, { parent: number; command: string }>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    if (close === -1) continue;
    const command = stat.slice(stat.indexOf("(") + 1, close);
    const parent = Number(stat.slice(close + 2).split(" ")[1]);
    parents.set(Number(entry), { parent, command });
  }
  const under = (pid: number): boolean => {
    for (let current = parents.get(pid); current; current = parents.get(current.parent)) {
      if (current.parent === root) return true;
    }
    return false;
  };
  return [...parents].flatMap(([pid, info]) => (info.command === name && under(pid) ? [pid] : []));
}
