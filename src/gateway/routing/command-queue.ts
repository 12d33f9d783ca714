import { GatewayClosedError } from "../gateway-closed-error.js";

interface QueuedCommand {
  run: () => Promise<void>;
  cancel: (error: Error) => void;
}

/**
 * The commands (`/compact`, `/clear`) waiting for one channel's agent to be idle. Each
 * runs alone: the router starts the next one when no turn is in flight and none runs,
 * and holds the channel's messages until the queue is empty again.
 */
export class CommandQueue {
  readonly #waiting: QueuedCommand[] = [];
  #running = false;

  /** True while a command runs or waits: messages must wait behind it. */
  get busy(): boolean {
    return this.#running || this.#waiting.length > 0;
  }

  /** True while commands wait to run (none runs yet, or more wait behind the running one). */
  get pending(): boolean {
    return this.#waiting.length > 0 && !this.#running;
  }

  /** Queues `work`; resolves or rejects with it (a closed gateway rejects what never ran). */
  push<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({
        run: () => work().then(resolve, reject),
        cancel: reject,
      });
    });
  }

  /**
   * Runs the waiting commands one after another unless one already runs; `done` is called
   * once the queue is empty. Returns the work to track, or null when nothing was started.
   */
  drain(done: () => void): Promise<void> | null {
    if (this.#running || this.#waiting.length === 0) return null;
    this.#running = true;
    return (async () => {
      try {
        for (let next = this.#waiting.shift(); next; next = this.#waiting.shift()) {
          await next.run();
        }
      } finally {
        this.#running = false;
        done();
      }
    })();
  }

  /** Rejects every command that has not started. */
  close(): void {
    for (const command of this.#waiting.splice(0)) command.cancel(new GatewayClosedError());
  }
}
