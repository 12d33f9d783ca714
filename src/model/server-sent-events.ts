import { ApiError, jsonOrText } from "./api-error.js";
import type { HeaderReader } from "./retry-policy.js";

/** One dispatched Server-Sent Event: its `event:` name (null when unnamed) and joined `data:`. */
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

/**
 * Splits decoded text into Server-Sent Events (lines end in LF, CRLF or CR; a blank line
 * dispatches; `:` lines are comments). An event cut off by the end of the stream is dropped.
 */
export async function* serverSentEvents(
  chunks: AsyncIterable<string>,
): AsyncGenerator<ServerSentEvent> {
  let buffer = "";
  let event: string | null = null;
  let data: string[] = [];
  for await (const chunk of chunks) {
    buffer += chunk;
    let lineStart = 0;
    for (let index = 0; index < buffer.length; index++) {
      const code = buffer.charCodeAt(index);
      if (code !== 10 && code !== 13) continue;
      // A CR as the last character may be the first half of a CRLF still on its way.
      if (code === 13 && index + 1 === buffer.length) break;
      const line = buffer.slice(lineStart, index);
      if (code === 13 && buffer.charCodeAt(index + 1) === 10) index++;
      lineStart = index + 1;
      if (line === "") {
        if (event !== null || data.length > 0) yield { event, data: data.join("\n") };
        event = null;
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    buffer = buffer.slice(lineStart);
  }
}

/**
 * The Messages API's stream events, parsed, as the Anthropic SDK yields them: `ping` and
 * unnamed events are skipped, an `error` event is thrown as an `ApiError` without a status.
 */
export async function* messageStreamEvents(
  chunks: AsyncIterable<string>,
  header: HeaderReader,
): AsyncGenerator<unknown> {
  for await (const sse of serverSentEvents(chunks)) {
    if (sse.event === "ping" || sse.event === null) continue;
    if (sse.event === "error") throw new ApiError(undefined, jsonOrText(sse.data), header);
    if (sse.data === "") continue;
    yield JSON.parse(sse.data);
  }
}
