// A load generator for the gateway benches that is cheap on a 2-core machine: `node:http` over
// a keep-alive agent (no new connection per POST, no fetch/undici streams), and one SSE socket
// per channel whose frames are only parsed when they may be the awaited reply.
import http from "node:http";
import { performance } from "node:perf_hooks";

export interface Endpoint {
  url: string;
  token: string;
}

/** Sockets kept open between requests, at most `maxSockets` per gateway. */
export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets });
}

/** POSTs JSON and resolves with the status and parsed body. */
export function postJson(
  endpoint: Endpoint,
  path: string,
  body: unknown,
  agent: http.Agent,
): Promise<{ status: number; body: unknown }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${endpoint.url}${path}`,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${endpoint.token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => {
          try {
            resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
          } catch (error) {
            reject(error);
          }
        });
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
}

/**
 * One channel's event stream on one gateway. `reply(messageId)` resolves with the time
 * (performance.now()) its `reply` event arrived, whether it came before or after the call.
 */
export class ReplyStream {
  readonly #endpoint: Endpoint;
  readonly #channelId: string;
  #request: http.ClientRequest | undefined;
  #buffered = "";
  readonly #arrived = new Map<string, number>();
  readonly #waiting = new Map<string, (at: number) => void>();

  constructor(endpoint: Endpoint, channelId: string) {
    this.#endpoint = endpoint;
    this.#channelId = channelId;
  }

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const request = http.get(
        `${this.#endpoint.url}/api/channels/${this.#channelId}/events`,
        { agent: false, headers: { authorization: `Bearer ${this.#endpoint.token}` } },
        (response) => {
          if (response.statusCode !== 200) {
            reject(new Error(`event stream answered ${response.statusCode}`));
            return;
          }
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            this.#buffered += chunk;
            if (this.#buffered.includes(": connected")) resolve();
            this.#frames();
          });
          response.on("error", () => {});
        },
      );
      request.on("error", reject);
      this.#request = request;
    });
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
    this.#request?.destroy();
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
