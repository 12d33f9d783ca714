/**
 * What a turn's end writes on stream-json, as Claude Code writes it: `Compacted` after a
 * `/compact`, the `result` (its `permission_denials` those of this turn, its `total_cost_usd`
 * the running total of the process, not the turn's), then each of the turn's messages
 * `completed` (or `cancelled` when the turn was interrupted). Fed every event of the session.
 */
import type { AgentEvent, TurnOutcome } from "../agent/events.js";
import { localCommandOutputLine } from "./compaction-lines.js";
import { lifecycleLine, type OutputLine, resultLine } from "./output-lines.js";
import { PermissionDenials } from "./permission-denials.js";

export class TurnEndLines {
  readonly #denials = new PermissionDenials();
  /** What the process spent so far, in US dollars. */
  #costTotal = 0;

  record(event: AgentEvent): void {
    this.#denials.record(event);
  }

  /** The lines ending the turn of `uuids` (the messages it answered) with `outcome`. */
  lines(sessionId: string, model: string, outcome: TurnOutcome, uuids: string[]): OutputLine[] {
    this.#costTotal += outcome.totalCostUsd;
    const lines: OutputLine[] = [];
    if (outcome.localCommand === "compact" && !outcome.isError) {
      lines.push(localCommandOutputLine(sessionId, "Compacted"));
    }
    lines.push(
      resultLine(sessionId, model, outcome, {
        userMessageUuids: uuids,
        permissionDenials: this.#denials.take(),
        totalCostUsd: this.#costTotal,
      }),
    );
    const state = outcome.subtype === "aborted" ? "cancelled" : "completed";
    for (const uuid of uuids) lines.push(lifecycleLine(sessionId, uuid, state));
    return lines;
  }
}
