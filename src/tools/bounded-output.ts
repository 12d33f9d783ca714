/**
 * Text kept in bounded memory however much is appended: the first `headLimit`
 * and the last `tailLimit` UTF-16 units, plus a count of what was cut between.
 */
export class BoundedOutput {
  private head = "";
  private tail = "";
  private cut = 0;

  constructor(
    private readonly headLimit: number,
    private readonly tailLimit: number,
  ) {}

  append(text: string): void {
    let rest = text;
    if (this.head.length < this.headLimit) {
      const room = this.headLimit - this.head.length;
      const take = safeEnd(rest, Math.min(room, rest.length));
      this.head += rest.slice(0, take);
      rest = rest.slice(take);
      if (rest.length === 0) return;
    }
    this.tail += rest;
    // Trim in amortised batches: only when the tail has grown to twice its limit.
    if (this.tail.length > this.tailLimit * 2) this.trimTail();
  }

  /** Characters dropped between head and tail. */
  get truncatedChars(): number {
    this.trimTail();
    return this.cut;
  }

  /** The kept text, with `... [N characters cut] ...` where text was dropped. */
  toString(): string {
    this.trimTail();
    if (this.cut === 0) return this.head + this.tail;
    return `${this.head}\n\n... [${this.cut} characters cut] ...\n\n${this.tail}`;
  }

  private trimTail(): void {
    if (this.tail.length <= this.tailLimit) return;
    const start = safeStart(this.tail, this.tail.length - this.tailLimit);
    this.cut += start;
    this.tail = this.tail.slice(start);
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** An end index that does not split a surrogate pair. */
function safeEnd(text: string, end: number): number {
  if (end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) return end - 1;
  return end;
}

/** A start index that does not split a surrogate pair. */
function safeStart(text: string, start: number): number {
  if (start > 0 && start < text.length && isHighSurrogate(text.charCodeAt(start - 1))) {
    return start + 1;
  }
  return start;
}
