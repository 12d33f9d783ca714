import { h } from "./dom.js";
import type { StoredMessage } from "./types.js";

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
  private lastText: HTMLElement | null = null;
  private summary = "";
  ended = false;
  replyId: string | null = null;
  replyText = "";

  constructor(private readonly log: HTMLElement) {}

  appendText(text: string): void {
    const { body } = this.stretch();
    if (!this.lastText || body.lastElementChild !== this.lastText) {
      this.lastText = h("div", { class: "message-text", "data-testid": "stream-text" });
      body.append(this.lastText);
    }
    this.lastText.append(text);
    this.streamed += text;
  }

  appendActivity(element: HTMLElement): void {
    this.stretch().body.append(element);
    this.lastText = null;
  }

  /** Marks the turn finished; `summary` (duration, cost) stays on its last stretch. */
  end(state: "done" | "failed", summary: string): void {
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
    if (!this.streamed.includes(message.text.trim())) this.appendText(message.text);
    const last = this.stretches.at(-1);
    if (!last) return;
    last.article.dataset.messageId = message.id;
    last.article.dataset.kind = "reply";
  }

  /** Where the turn writes next: its last stretch while that still ends the log. */
  private stretch(): Stretch {
    const last = this.stretches.at(-1);
    if (last && this.log.lastElementChild === last.article) return last;
    if (last) last.status.textContent = "";
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
