import type { GatewayEvent } from "../../gateway/events.js";
import type { ReplyOutbox } from "./reply-outbox.js";
import { argumentSummary } from "./tool-summary.js";

/** Steps shown at most; earlier ones are counted. */
const SHOWN_STEPS = 8;
/** While a step runs, its elapsed time is refreshed this often. */
const TICK_MS = 5000;

interface Step {
  id: string;
  label: string;
  startedAt: number;
  endedAt?: number;
  failed?: boolean;
}

interface Turn {
  startedAt: number;
  steps: Step[];
  /** The ledger id of the status message, once recorded. */
  entryId: Promise<string | null> | undefined;
  timer: NodeJS.Timeout | undefined;
  ticker: NodeJS.Timeout | undefined;
  lastEdit: number;
}

function seconds(milliseconds: number): string {
  const total = Math.round(milliseconds / 1000);
  return total >= 60 ? `${Math.floor(total / 60)} min ${total % 60} s` : `${total} s`;
}

/**
 * One status message per turn, edited as the agent works: each tool with its argument summary
 * and elapsed time, compactions. The message is sent at the turn's first step (a turn that
 * only answers needs none), edited at most once per `intervalMs` (the platform's edit rate:
 * the newest text wins), and closed with a summary line when the turn ends.
 */
export class TurnProgress {
  readonly #outbox: ReplyOutbox;
  readonly #intervalMs: (channelId: string) => number;
  readonly #turns = new Map<string, Turn>();
  readonly #now: () => number;

  constructor(outbox: ReplyOutbox, intervalMs: (channelId: string) => number, now = Date.now) {
    this.#outbox = outbox;
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /** Takes the channel's agent events; true when it changed the status. */
  observe(event: GatewayEvent): void {
    const channelId = event.channelId;
    switch (event.type) {
      case "tool_start":
        this.#step(channelId, {
          id: event.toolUseId,
          label: `${event.name}: ${argumentSummary(event.name, event.input)}`,
          startedAt: this.#now(),
        });
        break;
      case "tool_end":
        this.#end(channelId, event.toolUseId, event.isError);
        break;
      case "compaction_start":
        this.#step(channelId, {
          id: "compaction",
          label: `compacting the conversation (${Math.round(event.preTokens / 1000)}k tokens)`,
          startedAt: this.#now(),
        });
        break;
      case "compaction_end":
        this.#end(channelId, "compaction", event.error !== undefined);
        break;
      case "turn_end":
        this.finish(channelId);
        break;
      default:
    }
  }

  /** Closes the channel's status message with its summary (the answer follows it). */
  finish(channelId: string): void {
    const turn = this.#turns.get(channelId);
    if (!turn) return;
    this.#turns.delete(channelId);
    clearTimeout(turn.timer);
    clearInterval(turn.ticker);
    const now = this.#now();
    for (const step of turn.steps) step.endedAt ??= now;
    const count = turn.steps.length;
    const summary = `Done: ${count} step${count === 1 ? "" : "s"} in ${seconds(now - turn.startedAt)}.`;
    void this.#edit(channelId, turn, `${summary}\n${this.#lines(turn, now)}`);
  }

  #step(channelId: string, step: Step): void {
    let turn = this.#turns.get(channelId);
    if (!turn) {
      turn = {
        startedAt: step.startedAt,
        steps: [],
        entryId: undefined,
        timer: undefined,
        ticker: undefined,
        lastEdit: 0,
      };
      this.#turns.set(channelId, turn);
    }
    turn.steps.push(step);
    if (turn.entryId === undefined) {
      const text = this.#text(turn);
      turn.lastEdit = this.#now();
      turn.entryId = this.#outbox
        .send(channelId, "progress", { text, format: "plain" })
        .then((recorded) => recorded?.id ?? null);
      const owner = turn;
      owner.ticker = setInterval(() => this.#schedule(channelId, owner), TICK_MS);
      owner.ticker.unref();
      return;
    }
    this.#schedule(channelId, turn);
  }

  #end(channelId: string, stepId: string, failed: boolean): void {
    const turn = this.#turns.get(channelId);
    const step = turn?.steps.findLast(
      (candidate) => candidate.id === stepId && candidate.endedAt === undefined,
    );
    if (!turn || !step) return;
    step.endedAt = this.#now();
    step.failed = failed;
    this.#schedule(channelId, turn);
  }

  /** One edit at most per interval: the newest text, when the interval has passed. */
  #schedule(channelId: string, turn: Turn): void {
    if (turn.timer !== undefined) return;
    const wait = Math.max(0, turn.lastEdit + this.#intervalMs(channelId) - this.#now());
    turn.timer = setTimeout(() => {
      turn.timer = undefined;
      if (this.#turns.get(channelId) !== turn) return;
      turn.lastEdit = this.#now();
      void this.#edit(channelId, turn, this.#text(turn));
    }, wait);
    turn.timer.unref();
  }

  async #edit(channelId: string, turn: Turn, text: string): Promise<void> {
    const entryId = await turn.entryId;
    if (entryId) await this.#outbox.edit(channelId, entryId, "progress", { text, format: "plain" });
  }

  #text(turn: Turn): string {
    return `Working\u2026 ${seconds(this.#now() - turn.startedAt)}\n${this.#lines(turn, this.#now())}`;
  }

  #lines(turn: Turn, now: number): string {
    const hidden = Math.max(0, turn.steps.length - SHOWN_STEPS);
    const lines = turn.steps.slice(hidden).map((step) => {
      const mark = step.endedAt === undefined ? "\u25b8" : step.failed ? "\u2717" : "\u2713";
      return `${mark} ${step.label} (${seconds((step.endedAt ?? now) - step.startedAt)})`;
    });
    return [...(hidden > 0 ? [`\u2026 ${hidden} earlier steps`] : []), ...lines].join("\n");
  }
}
