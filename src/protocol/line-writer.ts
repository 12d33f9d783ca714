import { randomUUID } from "../agent/random-uuid.js";
import type { OutputLine } from "./output-lines.js";

/**
 * The longest stream-json line rudder writes: 1 MiB of UTF-8, LF included. The strictest host
 * known reads no more (the Python Agent SDK's default `max_buffer_size`); Claude Code's
 * TypeScript SDK reads whole lines and rudder's own runner caps them at 16 MiB.
 */
export const MAX_OUTPUT_LINE_BYTES = 1024 * 1024;

/**
 * Encodes one output line as NDJSON text, never longer than `maxBytes`.
 *
 * A line that fits is written as it is. Text that would not fit goes out in pieces, as the API's
 * deltas do: an `assistant` line with one text block becomes several `assistant` lines, same
 * `message.id`, each one piece of the block in order (join them for the whole text); a
 * `stream_event` text delta becomes several deltas. Any other line (a `result`, a tool result,
 * a task notification) keeps its shape and has its longest strings cut, each ending in a note
 * saying how much was cut: the full reply is in the `assistant` lines before the `result`.
 */
export function encodeOutputLine(line: OutputLine, maxBytes = MAX_OUTPUT_LINE_BYTES): string {
  // A string longer than the budget cannot fit: no need to copy the whole line to find out.
  if ((longestString(line, [])?.value.length ?? 0) <= maxBytes) {
    const whole = `${JSON.stringify(line)}\n`;
    if (Buffer.byteLength(whole) <= maxBytes) return whole;
  }
  const pieces = splitText(line, maxBytes) ?? [cutLongestStrings(line, maxBytes)];
  return pieces.map((piece) => `${JSON.stringify(piece)}\n`).join("");
}

/** The text an oversized line carries in pieces, or undefined when it is not such a line. */
function splitText(line: OutputLine, maxBytes: number): OutputLine[] | undefined {
  const slot = textSlot(line);
  if (slot === undefined) return undefined;
  const overhead = Buffer.byteLength(`${JSON.stringify(slot.with(""))}\n`);
  // Room for the fresh uuid each further piece gets.
  const budget = maxBytes - overhead - 64;
  if (budget < 64) return undefined;
  return textPieces(slot.text, budget).map((piece, index) => {
    const copy = slot.with(piece);
    return index === 0 ? copy : { ...copy, ...freshUuid(line) };
  });
}

interface TextSlot {
  text: string;
  /** A copy of the line with `text` in place of the slot's text. */
  with(text: string): OutputLine;
}

function textSlot(line: OutputLine): TextSlot | undefined {
  if (line.type === "assistant" && isRecord(line.message)) {
    const message = line.message;
    const content = Array.isArray(message.content) ? message.content : [];
    const block = content[0];
    if (content.length !== 1 || !isRecord(block) || block.type !== "text") return undefined;
    if (typeof block.text !== "string") return undefined;
    return {
      text: block.text,
      with: (text) => ({ ...line, message: { ...message, content: [{ ...block, text }] } }),
    };
  }
  if (line.type === "stream_event" && isRecord(line.event) && isRecord(line.event.delta)) {
    const event = line.event;
    const delta = line.event.delta;
    if (delta.type !== "text_delta" || typeof delta.text !== "string") return undefined;
    return {
      text: delta.text,
      with: (text) => ({ ...line, event: { ...event, delta: { ...delta, text } } }),
    };
  }
  return undefined;
}

function freshUuid(line: OutputLine): Partial<OutputLine> {
  return typeof line.uuid === "string" ? { uuid: randomUUID() } : {};
}

/**
 * Splits `text` into pieces whose JSON-escaped UTF-8 is at most `budget` bytes each. A piece too
 * long is shortened in proportion to how far over it is (not halved: text that escapes to
 * several bytes a character would take many halvings, each escaping the piece again), and the
 * next piece starts from a little under the length that would have fitted, so a long text is
 * mostly escaped once here.
 */
function textPieces(text: string, budget: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  // No more characters than bytes: each character escapes to one byte at least.
  let guess = budget;
  while (start < text.length) {
    let length = Math.min(guess, text.length - start);
    let piece = sliceWhole(text, start, length);
    let bytes = escapedBytes(piece);
    while (bytes > budget) {
      length = Math.max(1, Math.min(length - 1, Math.floor((length * budget) / bytes)));
      piece = sliceWhole(text, start, length);
      bytes = escapedBytes(piece);
    }
    pieces.push(piece);
    start += piece.length;
    // A little under what would just fit, so that the next piece is mostly escaped once.
    const fits = (piece.length * budget) / Math.max(1, bytes);
    guess = Math.min(budget, Math.max(1, Math.floor(fits * 0.98)));
  }
  return pieces;
}

/** `text.slice(start, start + length)`, one unit longer rather than splitting a surrogate pair. */
function sliceWhole(text: string, start: number, length: number): string {
  const end = start + length;
  const last = text.charCodeAt(end - 1);
  const extended = last >= 0xd800 && last <= 0xdbff && end < text.length ? end + 1 : end;
  return text.slice(start, extended);
}

function escapedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text)) - 2;
}

/** A copy of `line` whose longest strings are cut, each with a note, until it fits. */
function cutLongestStrings(line: OutputLine, maxBytes: number): OutputLine {
  const cuts = new Map<string, { path: (string | number)[]; value: string; keep: number }>();
  const apply = () => {
    let cut = line;
    for (const { path, value, keep: length } of cuts.values()) {
      const kept = sliceWhole(value, 0, length);
      const note = `\n[rudder: ${value.length - kept.length} more characters not shown: stream-json lines are kept under ${maxBytes} bytes]`;
      cut = replaceAt(cut, path, kept + note) as OutputLine;
    }
    return cut;
  };
  // A string over the whole budget is first cut to it, so the loop below starts near the end.
  const first = longestString(line, []);
  if (first !== undefined && first.value.length > maxBytes) {
    cuts.set(JSON.stringify(first.path), { ...first, keep: maxBytes });
  }
  let current = apply();
  for (;;) {
    const excess = Buffer.byteLength(`${JSON.stringify(current)}\n`) - maxBytes;
    if (excess <= 0) return current;
    const longest = longestString(current, []);
    if (longest === undefined) return current;
    const key = JSON.stringify(longest.path);
    const cut = cuts.get(key) ?? {
      path: longest.path,
      value: longest.value,
      keep: longest.value.length,
    };
    // Halving at most, so that two long strings (a result and its `errors` copy) share the room.
    const keep = Math.max(0, cut.keep - excess - 200, Math.floor(cut.keep / 2));
    if (keep === cut.keep) return current;
    cut.keep = keep;
    cuts.set(key, cut);
    current = apply();
  }
}

function longestString(
  value: unknown,
  path: (string | number)[],
): { value: string; path: (string | number)[] } | undefined {
  if (typeof value === "string") return { value, path };
  let best: { value: string; path: (string | number)[] } | undefined;
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : isRecord(value)
      ? Object.entries(value)
      : [];
  for (const [key, item] of entries) {
    const found = longestString(item, [...path, key]);
    if (found && (best === undefined || found.value.length > best.value.length)) best = found;
  }
  return best;
}

function replaceAt(value: unknown, path: (string | number)[], replacement: string): unknown {
  const [key, ...rest] = path;
  if (key === undefined) return replacement;
  if (Array.isArray(value)) {
    return value.map((item, index) => (index === key ? replaceAt(item, rest, replacement) : item));
  }
  if (isRecord(value)) return { ...value, [key]: replaceAt(value[key], rest, replacement) };
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
