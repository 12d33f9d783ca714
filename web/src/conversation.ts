import { type ActivityLine, activityLine, formatInput, noticeLine } from "./activity.js";
import { clock, h } from "./dom.js";
import { type MessageView, messageView, pendingMessage } from "./message-view.js";
import type { Disposition, GatewayEvent, StoredMessage } from "./types.js";

/** One stretch of a turn in the log; a turn continues in a new stretch below a message sent during it. */
interface TurnStretch {
  article: HTMLElement;
  body: HTMLElement;
  status: HTMLElement;
}

interface Turn {
  stretches: TurnStretch[];
  /** Everything streamed so far, to tell whether the final reply still needs showing. */
  streamed: string;
  lastText: HTMLElement | null;
  ended: boolean;
  replyId: string | null;
}

/**
 * The conversation of one channel: stored messages, and the live turn built
 * from the event stream (streamed text, tool calls, task notices). Applying
 * the same message twice (history, then its event) updates it in place.
 */
export class Conversation {
  private readonly messages = new Map<string, MessageView>();
  private readonly activities = new Map<string, ActivityLine>();
  private turn: Turn | null = null;
  private pendingCount = 0;

  constructor(
    private readonly log: HTMLElement,
    private readonly onBusy: (busy: boolean) => void,
  ) {}

  clear(): void {
    this.log.replaceChildren();
    this.messages.clear();
    this.activities.clear();
    this.turn = null;
    this.onBusy(false);
  }

  get busy(): boolean {
    return this.turn !== null && !this.turn.ended;
  }

  showHistory(messages: StoredMessage[]): void {
    this.keepScrolled(() => {
      for (const message of messages) this.upsert(message);
    });
  }

  /** Shows a message as soon as it is sent; returns the key to settle it with. */
  showPending(text: string): string {
    this.pendingCount += 1;
    const key = `pending-${this.pendingCount}`;
    this.keepScrolled(() => this.upsert(pendingMessage(key, text)));
    this.messages.get(key)?.element.classList.add("message-pending");
    return key;
  }

  /** The gateway accepted the pending message: give it its id and routing. */
  settlePending(key: string, id: string, disposition: Disposition): void {
    const pending = this.messages.get(key);
    this.messages.delete(key);
    if (!pending) return;
    const known = this.messages.get(id);
    if (known) {
      pending.element.remove();
      known.update({}, disposition);
      return;
    }
    pending.element.classList.remove("message-pending");
    pending.update({ id, state: "received" }, disposition);
    this.messages.set(id, pending);
  }

  /** The gateway refused the pending message: take it back out of the log. */
  dropPending(key: string): void {
    this.messages.get(key)?.element.remove();
    this.messages.delete(key);
  }

  apply(event: GatewayEvent): void {
    this.keepScrolled(() => this.applyEvent(event));
  }

  private applyEvent(event: GatewayEvent): void {
    switch (event.type) {
      case "turn_start":
        this.endTurn("done");
        this.startTurn();
        return;
      case "text_delta":
        this.appendText(event.text);
        return;
      case "tool_start": {
        const line = activityLine(
          "tool",
          event.name,
          formatInput(event.input),
          JSON.stringify(event.input, null, 2),
          event.toolUseId,
        );
        this.activities.set(`tool:${event.toolUseId}`, line);
        this.appendActivity(line.element);
        return;
      }
      case "tool_end":
        this.activities
          .get(`tool:${event.toolUseId}`)
          ?.finish(event.isError ? "error" : "ok", "", event.content);
        return;
      case "permission_denied":
        this.activities.get(`tool:${event.toolUseId}`)?.finish("error", "", event.reason);
        this.appendActivity(
          noticeLine("denied", `${event.name}: ${event.reason}`, "", true).element,
        );
        return;
      case "task_start": {
        const line = activityLine("task", "task", event.command, event.command, event.taskId);
        this.activities.set(`task:${event.taskId}`, line);
        this.appendActivity(line.element);
        return;
      }
      case "task_end": {
        const outcome = event.status === "completed" ? "ok" : "error";
        const exit =
          event.exitCode === null ? event.status : `${event.status}, exit ${event.exitCode}`;
        this.activities.get(`task:${event.taskId}`)?.finish(outcome, "", event.summary);
        const line = activityLine(
          "task",
          "task finished",
          `(${exit}) ${event.command}`,
          event.summary,
        );
        line.finish(outcome, "", "");
        this.appendActivity(line.element);
        return;
      }
      case "inbox_delivered": {
        const parts = [];
        if (event.texts.length > 0) parts.push(`${event.texts.length} message(s)`);
        if (event.taskIds.length > 0) parts.push(`${event.taskIds.length} task notice(s)`);
        const body = event.texts.join("\n\n");
        this.appendActivity(
          noticeLine("delivered", `${parts.join(" and ")} into the turn`, body, false).element,
        );
        return;
      }
      case "model_retry":
        this.appendActivity(
          noticeLine(
            "retry",
            `attempt ${event.attempt} in ${Math.round(event.delayMs / 100) / 10}s: ${event.message}`,
            event.message,
            false,
          ).element,
        );
        return;
      case "hook_warning":
        this.appendActivity(
          noticeLine("hook", `${event.event}: ${event.message}`, event.message, true).element,
        );
        return;
      case "turn_end": {
        const { outcome } = event;
        if (outcome.isError) {
          this.appendActivity(
            noticeLine("turn failed", `${outcome.subtype}: ${outcome.result}`, outcome.result, true)
              .element,
          );
        }
        this.endTurn(outcome.isError ? "failed" : "done", turnSummary(outcome));
        return;
      }
      case "message_received":
        this.upsert(event.message, event.disposition);
        return;
      case "message_state":
        this.messages.get(event.messageId)?.update({ state: event.state });
        return;
      case "reply":
        this.showReply(event.message);
        return;
      case "fallback":
        this.endTurn("failed");
        this.upsert(event.message);
        this.messages
          .get(event.message.id)
          ?.note(`Retried automatically at ${clock(event.retryAt)}.`);
        return;
      case "error":
        this.endTurn("failed");
        this.upsert(event.message);
        return;
      default:
        // model_start and model_end carry nothing the page shows beyond the deltas.
        return;
    }
  }

  private upsert(message: StoredMessage, disposition?: Disposition): void {
    const known = this.messages.get(message.id);
    if (known) {
      known.update(message, disposition);
      return;
    }
    const view = messageView(message, disposition);
    this.messages.set(message.id, view);
    this.log.append(view.element);
  }

  /** The final reply belongs to the turn that streamed it; otherwise it stands alone. */
  private showReply(message: StoredMessage): void {
    const turn = this.turn;
    if (this.messages.has(message.id) || !turn || turn.replyId !== null) {
      this.upsert(message);
      return;
    }
    turn.replyId = message.id;
    if (!turn.streamed.includes(message.text.trim())) this.appendText(message.text);
    const last = turn.stretches.at(-1);
    if (last) {
      last.article.dataset.messageId = message.id;
      last.article.dataset.kind = "reply";
    }
  }

  private startTurn(): Turn {
    this.turn = { stretches: [], streamed: "", lastText: null, ended: false, replyId: null };
    this.onBusy(true);
    return this.turn;
  }

  private endTurn(state: "done" | "failed", summary = ""): void {
    const turn = this.turn;
    if (!turn || turn.ended) return;
    turn.ended = true;
    for (const stretch of turn.stretches) {
      stretch.article.dataset.turnState = state;
      stretch.status.textContent = "";
    }
    const last = turn.stretches.at(-1);
    if (last) last.status.textContent = summary;
    this.onBusy(false);
  }

  /** The live turn, or a new one when events arrive for a turn whose start was missed. */
  private liveTurn(): Turn {
    return this.turn && !this.turn.ended ? this.turn : this.startTurn();
  }

  /** Where the turn writes next: its last stretch while that is still the end of the log. */
  private stretch(turn: Turn): TurnStretch {
    const last = turn.stretches.at(-1);
    if (last && this.log.lastElementChild === last.article) return last;
    const status = h("span", { class: "turn-status-text" }, "working\u2026");
    const body = h("div", { class: "turn-body" });
    const article = h(
      "article",
      {
        class: `message message-reply turn${last ? " turn-continued" : ""}`,
        "data-testid": "turn",
        "data-role": "assistant",
        "data-turn-state": "streaming",
      },
      h("header", {}, h("span", { class: "author" }, "assistant"), status),
      body,
    );
    this.log.append(article);
    const stretch = { article, body, status };
    turn.stretches.push(stretch);
    turn.lastText = null;
    return stretch;
  }

  private appendText(text: string): void {
    const turn = this.liveTurn();
    const { body } = this.stretch(turn);
    if (!turn.lastText || body.lastElementChild !== turn.lastText) {
      turn.lastText = h("div", { class: "message-text", "data-testid": "stream-text" });
      body.append(turn.lastText);
    }
    turn.lastText.append(text);
    turn.streamed += text;
  }

  /** Activity joins the live turn; a task notice between turns stands alone in the log. */
  private appendActivity(element: HTMLElement): void {
    if (this.turn && !this.turn.ended) {
      this.stretch(this.turn).body.append(element);
      this.turn.lastText = null;
      return;
    }
    this.log.append(element);
  }

  /** Follows the end of the log unless the reader has scrolled up. */
  private keepScrolled(change: () => void): void {
    const { scrollHeight, scrollTop, clientHeight } = this.log;
    const atEnd = scrollHeight - scrollTop - clientHeight < 48;
    change();
    if (atEnd) this.log.scrollTop = this.log.scrollHeight;
  }
}

function turnSummary(outcome: { durationMs: number; totalCostUsd: number; numTurns: number }) {
  const seconds = `${(outcome.durationMs / 1000).toFixed(1)}s`;
  const cost = outcome.totalCostUsd > 0 ? `, $${outcome.totalCostUsd.toFixed(4)}` : "";
  return `${seconds}${cost}`;
}
