import { connect } from "node:net";

export interface RawAnswer {
  /** 0 when the server closed the connection without answering. */
  status: number;
  /** The head and whatever of the body came with it. */
  text: string;
}

/**
 * Sends `head` (request line and headers, without the blank line) and `body` as they are,
 * over a fresh connection, so paths and bodies reach the server unnormalised (fetch would
 * re-encode them). Resolves at the status line's arrival plus what came with it, or when the
 * server closes.
 */
export function rawRequest(
  port: number,
  head: string,
  body: string | Buffer = "",
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    const finish = () => {
      socket.destroy();
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: match ? Number(match[1]) : 0, text });
    };
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      if (text.includes("\r\n\r\n")) finish();
    });
    socket.on("end", finish);
    socket.on("error", finish);
    const length = Buffer.byteLength(body);
    const framing = body === "" ? "" : `Content-Length: ${length}\r\n`;
    socket.write(`${head}\r\n${framing}Connection: close\r\n\r\n`);
    if (body !== "") socket.write(body);
  });
}

/**
 * Sends `head` at once, then `text` one byte every `everyMs`, until the server closes;
 * resolves the ms it took and what the server said.
 */
export function trickle(
  port: number,
  text: string,
  everyMs: number,
  head = "",
): Promise<{ ms: number; got: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, "127.0.0.1");
    if (head !== "") socket.write(head);
    let got = "";
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < text.length) socket.write(text[sent] ?? "");
      sent += 1;
    }, everyMs);
    socket.on("data", (chunk) => {
      got += chunk.toString("utf8");
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ ms: Date.now() - started, got });
    });
  });
}
