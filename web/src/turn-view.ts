import { h } from "./dom.js";
import { StreamingMarkdown } from "./markdown.js";
import type { StoredMessage } from "./types.js";

function withoutSpace(text: string): string {
  return text.replace(/\s+/g, "");
}

/**
 * What of a stored reply the page has not shown yet. The reply holds everything the turn said
 * (its separate texts joined by blank lines the stream did not send, so white space does not
 * count): nothing when it all streamed, the rest when the stream showed its beginning (a page
 * that joined mid-turn or replayed only part of it), else the whole reply.
 */
function unstreamedPart(streamed: string, reply: string): string {
  const seen = withoutSpace(streamed);
  const whole = withoutSpace(reply);
  if (seen.includes(whole)) return "";
  if (seen === "" || !whole.startsWith(seen)) return reply;
  let count = 0;
  let index = 0;
  while (index < reply.length && count < seen.length) {
    if (!/\s/.test(reply[index] ?? "")) count += 1;
    index += 1;
  }
  return reply.slice(index).replace(/^\s+/, "");
}

/** One stretch of a turn in the log. */
interface Stretch {
  article: HTMLElement;
  body: HTMLElement;
  status: HTMLElement;
}

/**
 * A turn as it streams: text and activity lines in the order they came.
 * A message sent during the turn lands below it in the log; the turn then
 * continues in a new stretch under that message, so the log reads in time order.
 */
export class TurnView {
  private readonly stretches: Stretch[] = [];
  /** Everything streamed, to tell whether the final reply still needs showing. */
  private streamed = "";
  private lastText: StreamingMarkdown | null = null;
  private summary = "";
  ended = false;
  replyId: string | null = null;
  replyText = "";

  constructor(private readonly log: HTMLElement) {}

  appendText(text: string): void {
    const { body } = this.stretch();
    if (!this.lastText || body.lastElementChild !== this.lastText.element) {
      this.lastText?.flush();
      this.lastText = new StreamingMarkdown(
        h("div", { class: "message-text markdown", "data-testid": "stream-text" }),
      );
      body.append(this.lastText.element);
    }
    this.lastText.append(text);
    this.streamed += text;
  }

  appendActivity(element: HTMLElement): void {
    this.stretch().body.append(element);
    this.lastText?.flush();
    this.lastText = null;
  }

  /** Marks the turn finished; `summary` (duration, cost) stays on its last stretch. */
  end(state: "done" | "failed", summary: string): void {
    this.lastText?.flush();
    if (!this.ended || state === "failed") {
      for (const stretch of this.stretches) {
        stretch.article.dataset.turnState = state;
        stretch.article.removeAttribute("aria-busy");
        stretch.status.textContent = "";
      }
    }
    if (summary) this.summary = summary;
    const last = this.stretches.at(-1);
    if (last) last.status.textContent = this.summary;
    this.ended = true;
  }

  /** The stored reply this turn produced: shown unless its text already streamed. */
  claimReply(message: StoredMessage): void {
    this.replyId = message.id;
    this.replyText = message.text;
    const unseen = unstreamedPart(this.streamed, message.text);
    if (unseen !== "") this.appendText(unseen);
    const last = this.stretches.at(-1);
    if (!last) return;
    last.article.dataset.messageId = message.id;
    last.article.dataset.kind = "reply";
  }

  /** Takes the turn out of the log (a replay of it is shown instead). */
  remove(): void {
    for (const stretch of this.stretches) stretch.article.remove();
  }

  /** Where the turn writes next: its last stretch while that still ends the log. */
  private stretch(): Stretch {
    const last = this.stretches.at(-1);
    if (last && this.log.lastElementChild === last.article) return last;
    if (last) last.status.textContent = "";
    this.lastText?.flush();
    const status = h(
      "span",
      { class: "turn-status-text" },
      this.ended ? this.summary : "working\u2026",
    );
    const body = h("div", { class: "turn-body" });
    const article = h(
      "article",
      {
        class: `message message-reply turn${last ? " turn-continued" : ""}`,
        "data-testid": "turn",
        "data-role": "assistant",
        "data-turn-state": this.ended ? (last?.article.dataset.turnState ?? "done") : "streaming",
        // Screen readers announce a streaming turn once it settles, not at every delta.
        "aria-busy": !this.ended,
      },
      h("header", {}, h("span", { class: "author" }, "assistant"), status),
      body,
    );
    this.log.append(article);
    const stretch = { article, body, status };
    this.stretches.push(stretch);
    this.lastText = null;
    return stretch;
  }
}
