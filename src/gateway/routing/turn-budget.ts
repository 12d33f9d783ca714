/**
 * One turn's budget: whether it may start (checked once its starter is handed over; its steers
 * wait for the same answer), what it spends as it runs (its `TurnMeter`), and the interrupt at
 * its next model call once that crosses a limit.
 */
import type { AgentProcess } from "../agents/agent-process.js";
import type { BudgetGuard } from "../budgets/budget-guard.js";
import { type BudgetBreach, stoppedText } from "../budgets/budget-text.js";
import type { RunningSpend } from "../budgets/spend-ledger.js";
import type { TurnMeter } from "../budgets/turn-meter.js";

export class TurnBudget {
  readonly #guard: BudgetGuard;
  readonly #meter: TurnMeter;
  readonly #spend: RunningSpend;
  /** The limit the turn would start past, or null: it may start. */
  readonly admitted: Promise<BudgetBreach | null>;
  #interrupted = false;

  /** A store that cannot be read holds no turn back (its failure is logged). */
  constructor(
    guard: BudgetGuard,
    channelId: string,
    handedOver: Promise<void>,
    logger?: (line: string) => void,
  ) {
    this.#guard = guard;
    this.#meter = guard.meter(channelId);
    this.#spend = guard.ledger.running(this.#meter);
    this.admitted = handedOver
      .then(() => guard.check(channelId))
      .catch((error: unknown) => {
        logger?.(`gateway: budgets of ${channelId} not checked: ${String(error)}`);
        return null;
      });
  }

  /**
   * Meters a line of the turn's agent (its spend so far stored as it grows); interrupts
   * `process` once the turn is to stop.
   */
  observe(line: unknown, process: AgentProcess): void {
    const stop = this.#meter.observe(line, () => this.#guard.crossed(this.#meter));
    this.#spend.progress();
    if (!stop) return;
    this.#interrupted = true;
    void process.interrupt().catch(() => {});
  }

  /** What the turn's end says when a budget stopped it; undefined when none did. */
  get stopText(): string | undefined {
    const breach = this.#meter.breach;
    return this.#interrupted && breach !== undefined ? stoppedText(breach) : undefined;
  }

  /**
   * The turn is over: `recorded` when a settled result's record holds its spend (its running
   * entry then goes), not when it ended without one (the entry stays, its only record).
   * Resolves once the store has it.
   */
  end(recorded: boolean): Promise<void> {
    this.#guard.end(this.#meter);
    return this.#spend.finish(recorded);
  }
}
