import { AgentActivity } from "./agent-activity.js";
import { clock } from "./dom.js";
import {
  isDivider,
  type MessageActions,
  type MessageView,
  messageView,
  pendingMessage,
} from "./message-view.js";
import { type DecidePermission, PermissionCards } from "./permission-card.js";
import { TurnView } from "./turn-view.js";
import type {
  ContextUsage,
  Disposition,
  GatewayEvent,
  PermissionRequestInfo,
  StoredMessage,
  TurnOutcome,
} from "./types.js";

/**
 * The conversation of one channel: stored messages, and the turns built from
 * the event stream (streamed text, tool calls, task notices).
 *
 * A fresh event stream starts with the gateway's recent events, which repeat
 * what the history already showed. Events come in the order things happened,
 * so a message an event carries moves to the end of the log (a steer lands
 * inside the turn it steered, as it did live), and a replayed turn replaces
 * the stored copy of its reply.
 */
export class Conversation {
  private readonly messages = new Map<string, MessageView>();
  private readonly activity = new AgentActivity();
  /** Replies shown as part of a turn rather than as stored messages. */
  private readonly replies = new Set<string>();
  /** Messages shown before the gateway gave them an id: key to text. */
  private readonly pending = new Map<string, string>();
  private pendingCount = 0;
  private turn: TurnView | null = null;
  /** Turns drawn from the store, by the reply or error that ended them. */
  private readonly storedTurns = new Map<string, TurnView>();
  private readonly permissions: PermissionCards;

  constructor(
    private readonly log: HTMLElement,
    private readonly onBusy: (busy: boolean) => void,
    decide: DecidePermission,
    onAsking: (pending: number) => void,
    private readonly onContext: (usage: ContextUsage | null) => void,
    private readonly actions: MessageActions = {},
  ) {
    this.permissions = new PermissionCards(decide, onAsking);
  }

  clear(): void {
    this.log.replaceChildren();
    this.messages.clear();
    this.activity.clear();
    this.replies.clear();
    this.storedTurns.clear();
    this.pending.clear();
    this.permissions.clear();
    this.turn = null;
    this.onBusy(false);
  }

  showHistory(messages: StoredMessage[]): void {
    this.keepScrolled(() => {
      for (const message of messages) {
        if (message.display && !this.messages.has(message.id)) this.showStoredTurn(message);
        if (message.kind !== "reply" || !this.storedTurns.has(message.id)) this.upsert(message);
      }
    });
  }

  /**
   * A turn as the store kept it (its texts, tool calls, duration and cost), drawn from the
   * same events as a live one. A replay of the live turn (a fresh stream's recent events)
   * replaces it.
   */
  private showStoredTurn(message: StoredMessage): void {
    const events = message.display?.events ?? [];
    const turn = new TurnView(this.log);
    for (const event of events) {
      if (event.type === "text_delta") turn.appendText(event.text);
      else {
        const line = this.activity.lineFor(event);
        if (line) turn.appendActivity(line);
      }
    }
    const end = events.findLast((event) => event.type === "turn_end");
    if (message.kind === "reply") {
      turn.claimReply(message);
      this.replies.add(message.id);
    }
    this.showFiles(turn, message);
    turn.end(message.kind === "error" ? "failed" : "done", end ? turnSummary(end.outcome) : "");
    this.storedTurns.set(message.id, turn);
  }

  /** The live copy of a stored turn arrived (a replay): the stored one gives way. */
  private dropStoredTurn(messageId: string): void {
    const stored = this.storedTurns.get(messageId);
    if (!stored) return;
    stored.remove();
    this.storedTurns.delete(messageId);
    this.replies.delete(messageId);
  }

  /** Shows a message as soon as it is sent; returns the key to settle it with. */
  showPending(text: string): string {
    this.pendingCount += 1;
    const key = `pending-${this.pendingCount}`;
    this.keepScrolled(() => this.upsert(pendingMessage(key, text)));
    this.messages.get(key)?.element.classList.add("message-pending");
    this.pending.set(key, text);
    return key;
  }

  /** The gateway accepted the pending message: give it its id and routing. */
  settlePending(key: string, id: string, disposition: Disposition): void {
    this.adopt(key, id);
    this.messages.get(id)?.update({}, disposition);
  }

  /** The gateway refused the pending message: take it back out of the log. */
  dropPending(key: string): void {
    this.messages.get(key)?.element.remove();
    this.messages.delete(key);
    this.pending.delete(key);
  }

  /** Requests still waiting for a decision (a page opened after they were asked). */
  showPermissions(requests: PermissionRequestInfo[]): void {
    this.keepScrolled(() => {
      for (const request of requests) this.showPermission(request);
    });
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
        this.liveTurn().appendText(event.text);
        return;
      case "message_received":
        this.adoptByText(event.message);
        this.place(event.message, event.disposition);
        return;
      case "message_state":
        this.messages.get(event.messageId)?.update({ state: event.state });
        return;
      case "reply":
        // A typed /compact or /clear is answered by a divider, not by a turn.
        if (isDivider(event.message.kind)) this.place(event.message);
        else this.showReply(event.message);
        return;
      case "notice":
        this.place(event.message);
        return;
      case "context_usage":
        this.onContext(event.usage);
        return;
      case "fallback":
      case "error":
        if (this.turn) this.dropStoredTurn(event.message.id);
        this.endTurn("failed");
        this.place(event.message);
        if (event.type === "fallback") {
          this.messages.get(event.message.id)?.note(`Retry at ${clock(event.retryAt)}.`);
        }
        return;
      case "permission_request":
        this.showPermission(event.request);
        return;
      case "permission_resolved":
        this.permissions.resolve(event.requestId, event.decision, event.resolvedBy, event.message);
        return;
      // A fresh stream's replay that begins past dropped events: the history was just loaded
      // from the store (a resumed one reloads it, see main.ts).
      case "events_dropped":
        return;
      default:
        break;
    }
    const line = this.activity.lineFor(event);
    if (line && this.turn && !this.turn.ended) this.turn.appendActivity(line);
    else if (line && betweenTurns.has(event.type)) this.log.append(line);
    else if (line) this.liveTurn().appendActivity(line);
    if (event.type === "turn_end") {
      this.endTurn(event.outcome.isError ? "failed" : "done", turnSummary(event.outcome));
    }
  }

  /** In the turn that asks, or on its own between turns (a wake-up's tool call). */
  private showPermission(request: PermissionRequestInfo): void {
    const card = this.permissions.show(request);
    if (!card) return;
    if (this.turn && !this.turn.ended) this.turn.appendActivity(card);
    else this.log.append(card);
  }

  /** Shows a message an event carries at the end of the log, where it happened. */
  private place(message: StoredMessage, disposition?: Disposition): void {
    this.upsert(message, disposition);
    const view = this.messages.get(message.id);
    if (view && this.log.lastElementChild !== view.element) this.log.append(view.element);
  }

  private upsert(message: StoredMessage, disposition?: Disposition): void {
    const known = this.messages.get(message.id);
    if (known) {
      known.update(message, disposition);
      return;
    }
    const view = messageView(message, disposition, this.actions);
    this.messages.set(message.id, view);
    this.log.append(view.element);
  }

  /**
   * Gives a pending message its stored id, whichever comes first: the POST's
   * answer or the `message_received` event. A copy already shown is dropped.
   */
  private adopt(key: string, id: string): void {
    const pending = this.messages.get(key);
    this.pending.delete(key);
    this.messages.delete(key);
    if (!pending) return;
    if (this.messages.has(id)) {
      pending.element.remove();
      return;
    }
    pending.element.classList.remove("message-pending");
    pending.update({ id, state: "received" });
    this.messages.set(id, pending);
  }

  private adoptByText(message: StoredMessage): void {
    if (this.messages.has(message.id)) return;
    for (const [key, text] of this.pending) {
      if (text !== message.text) continue;
      this.adopt(key, message.id);
      return;
    }
  }

  /** The reply belongs to the turn that streamed it, in place of a stored copy. */
  private showReply(message: StoredMessage): void {
    if (this.turn) this.dropStoredTurn(message.id);
    const turn = this.turn;
    if (this.replies.has(message.id)) return;
    if (!turn || (turn.replyId !== null && turn.replyText !== message.text)) {
      this.place(message);
      return;
    }
    this.replies.add(message.id);
    // One answer to several messages (a steered turn) is shown once.
    if (turn.replyId !== null) return;
    turn.claimReply(message);
    this.showFiles(turn, message);
    this.endTurn("done");
    this.messages.get(message.id)?.element.remove();
    this.messages.delete(message.id);
  }

  /** The files the agent sent in the turn, under its reply. */
  private showFiles(turn: TurnView, message: StoredMessage): void {
    const files = this.actions.files?.(message);
    if (files) turn.appendActivity(files);
  }

  private startTurn(): TurnView {
    this.turn = new TurnView(this.log);
    this.onBusy(true);
    return this.turn;
  }

  /** The live turn, or a new one when events arrive for a turn whose start was missed. */
  private liveTurn(): TurnView {
    return this.turn && !this.turn.ended ? this.turn : this.startTurn();
  }

  private endTurn(state: "done" | "failed", summary = ""): void {
    if (!this.turn) return;
    const wasLive = !this.turn.ended;
    this.turn.end(state, summary);
    if (wasLive) this.onBusy(false);
  }

  /** Follows the end of the log unless the reader has scrolled up. */
  private keepScrolled(change: () => void): void {
    const { scrollHeight, scrollTop, clientHeight } = this.log;
    const atEnd = scrollHeight - scrollTop - clientHeight < 48;
    change();
    if (atEnd) this.log.scrollTop = this.log.scrollHeight;
  }
}

/** Events that can come when no turn is running (a task ends after its turn did). */
const betweenTurns = new Set<string>(["task_end", "hook_warning", "turn_end"]);

/** Duration and cost, whichever the outcome reports. */
function turnSummary(outcome: TurnOutcome): string {
  const parts: string[] = [];
  const { durationMs } = outcome;
  if (durationMs >= 1000) parts.push(`${(durationMs / 1000).toFixed(1)}s`);
  else if (durationMs > 0) parts.push(`${Math.round(durationMs)}ms`);
  if (outcome.totalCostUsd > 0) parts.push(`$${outcome.totalCostUsd.toFixed(4)}`);
  return parts.join(", ");
}
