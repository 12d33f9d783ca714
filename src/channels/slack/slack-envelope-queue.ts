/**
 * The order Slack's envelopes are taken in: one at a time, as they came, each until its message
 * is stored (or found not to need storing); then its envelope is acknowledged and the next one
 * starts while the first is routed. So an acknowledgement waits for the store, never for
 * routing (Slack sends again what is not acknowledged within 3 seconds), and messages are still
 * stored in the order they were said.
 */
import { GatewayClosedError } from "../../gateway/gateway-closed-error.js";
import type { Ack } from "./slack-envelope.js";

/**
 * A handler: calls `stored` once its message is in the store, resolves when all is done; `ack`
 * answers the envelope with a payload (a slash command's reply) in place of the plain ack.
 */
export type EnvelopeJob = (stored: () => void, ack: Ack) => Promise<void>;

export class EnvelopeQueue {
  #turn: Promise<void> = Promise.resolve();
  readonly #running = new Set<Promise<void>>();

  /**
   * Runs `job` after the ones before it have stored their messages, and acknowledges the
   * envelope once `job` calls `stored` or ends (an ack the job sent itself, a slash command's
   * answer, is not repeated). A job the gateway refused because it is closing is left
   * unacknowledged: Slack gives it to the next connection.
   */
  add(signal: AbortSignal, ack: Ack, job: EnvelopeJob): void {
    let acked = false;
    const once: Ack = async (response) => {
      if (acked) return;
      acked = true;
      await ack(response);
    };
    this.#turn = this.#turn.then(
      () =>
        new Promise<void>((next) => {
          if (signal.aborted) {
            next();
            return;
          }
          const stored = () => {
            next();
            void once().catch(() => undefined);
          };
          const run = job(stored, once).then(stored, (error: unknown) => {
            if (error instanceof GatewayClosedError || signal.aborted) next();
            else stored();
          });
          this.#running.add(run);
          void run.finally(() => this.#running.delete(run));
        }),
    );
  }

  /** Resolves when every job taken has ended. */
  async idle(): Promise<void> {
    await this.#turn;
    while (this.#running.size > 0) await Promise.all(this.#running);
  }
}
