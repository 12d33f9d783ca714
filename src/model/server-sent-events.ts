/**
 * A decoder for Server-Sent Events, the framing of a streamed Messages API reply: fields
 * `event:` and `data:` (several data lines join with LF), a blank line ends an event, lines
 * starting with `:` are comments, and a line ends with LF, CR or CRLF, even when a chunk
 * boundary falls between CR and LF. An event without data is dropped, as the SDK dropped it.
 */
export interface ServerSentEvent {
  /** The `event:` field; undefined when the event named none. */
  event: string | undefined;
  data: string;
}

const LINE_END = /\r\n|\r|\n/;

export class ServerSentEventDecoder {
  #partial = "";
  /** Chunks of the partial line since it was last split (joined once its line ends). */
  #pieces: string[] = [];
  #heldCarriageReturn = false;
  #event: string | undefined;
  #data: string[] = [];

  /**
   * Feeds a chunk of text; returns the events it completed. A chunk with no line ending is only
   * kept (unless a CR waits before it): a 20 MB text delta arriving in many chunks is searched
   * and split once, when its line ends, not once per chunk (which took over a minute).
   */
  push(chunk: string): ServerSentEvent[] {
    if (!/[\r\n]/.test(chunk) && !this.#heldCarriageReturn) {
      this.#pieces.push(chunk);
      return [];
    }
    let text = this.#partial + this.#pieces.join("") + chunk;
    this.#pieces = [];
    // A CR last may be the first half of CRLF: it waits for the next chunk.
    const heldCarriageReturn = text.endsWith("\r");
    if (heldCarriageReturn) text = text.slice(0, -1);
    const lines = text.split(LINE_END);
    this.#partial = (lines.pop() ?? "") + (heldCarriageReturn ? "\r" : "");
    this.#heldCarriageReturn = heldCarriageReturn;
    const events: ServerSentEvent[] = [];
    for (const line of lines) {
      const event = this.#line(line);
      if (event !== undefined) events.push(event);
    }
    return events;
  }

  /** The stream ended: a last line without its ending still counts; an unfinished event is dropped. */
  end(): ServerSentEvent[] {
    const events = this.push("\n");
    this.#partial = "";
    this.#heldCarriageReturn = false;
    this.#event = undefined;
    this.#data = [];
    return events;
  }

  #line(line: string): ServerSentEvent | undefined {
    if (line === "") {
      const event =
        this.#data.length > 0 ? { event: this.#event, data: this.#data.join("\n") } : undefined;
      this.#event = undefined;
      this.#data = [];
      return event;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") this.#data.push(value);
    return undefined;
  }
}
