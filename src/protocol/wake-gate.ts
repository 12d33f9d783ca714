/**
 * `--ask-before-waking`: before a session wakes itself for background tasks that finished
 * after its turn, the host is asked with a `control_request` of subtype `wake` (the gateway
 * refuses a wake-up of a channel over its budget). The host answers `{behavior: "allow"}` or
 * `{behavior: "deny", message}`; an error answer (a host that does not know the request) allows
 * it, as before the request existed; a host gone (input ended) does not. One question at a
 * time: asked again while one waits, the same answer is awaited. A refused wake-up leaves the
 * tasks' notifications in the inbox, for the next turn to read.
 */
import type { HostRequests } from "./host-requests.js";

export class WakeGate {
  readonly #requests: HostRequests | undefined;
  #asking: Promise<boolean> | undefined;

  /** Without `requests` (no `--ask-before-waking`) every wake-up goes at once. */
  constructor(requests: HostRequests | undefined) {
    this.#requests = requests;
  }

  /** Runs `wake` once allowed, if the session is `idle` still by then. */
  wake(wake: () => void, idle: () => boolean): void {
    if (this.#requests === undefined) {
      wake();
      return;
    }
    void this.#ask(this.#requests).then((allowed) => {
      if (allowed && idle()) wake();
    });
  }

  /** Whether the host lets the session wake now. Never rejects. */
  #ask(requests: HostRequests): Promise<boolean> {
    this.#asking ??= requests
      .send({ subtype: "wake" }, new AbortController().signal)
      .then((answer) => {
        if (!answer.ok) return answer.reason === "error";
        return answer.response.behavior !== "deny";
      })
      .finally(() => {
        this.#asking = undefined;
      });
    return this.#asking;
  }
}
