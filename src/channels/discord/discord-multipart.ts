/**
 * A Discord message with a file, as the multipart body Discord takes (`payload_json` and
 * `files[0]`), built here as bytes. discord.js would build a `FormData` instead, which its HTTP
 * client (undici from npm) sends only when that class is its own: Node's global `FormData` is
 * another, and a process where the global is Node's (a test worker, an embedding host) fails
 * the send with "action is not a function". A body of bytes has no such dependency.
 */
import { randomBytes } from "node:crypto";

export interface MultipartBody {
  body: Buffer;
  contentType: string;
}

/** A part's quoted name: quotes and line breaks percent-encoded, as browsers send them. */
function quoted(name: string): string {
  return `"${name.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A")}"`;
}

export function multipartMessage(
  payload: unknown,
  file: { name: string; mediaType: string; data: Buffer },
): MultipartBody {
  const boundary = `rudder-${randomBytes(12).toString("hex")}`;
  const head = (name: string, type: string, filename?: string) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}` +
        (filename === undefined ? "" : `; filename=${quoted(filename)}`) +
        `\r\nContent-Type: ${type}\r\n\r\n`,
    );
  const body = Buffer.concat([
    head("payload_json", "application/json"),
    Buffer.from(JSON.stringify(payload)),
    Buffer.from("\r\n"),
    head("files[0]", file.mediaType || "application/octet-stream", file.name),
    file.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
