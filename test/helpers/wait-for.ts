/**
 * The tests' one bounded poll: for a state the code under test offers no event for (a process
 * gone, a row written, a file appeared), look every few milliseconds until it holds or a deadline
 * passes, and then fail with what was awaited. Prefer awaiting an event where there is one.
 */

/** How long a wait lasts by default: far past any healthy run, well under the test's timeout. */
export const WAIT_TIMEOUT_MS = 15_000;

/**
 * Calls `probe` every `intervalMs` until it gives a value other than `undefined`, `null` or
 * `false`, and resolves with that value; rejects, naming `what` (or the probe's source), when
 * `timeoutMs` passes first. A `what` given as a function is asked at the deadline, so the error
 * can tell the state that was left (the processes still alive, the lines seen). A probe that
 * throws fails the wait at once.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what?: string | (() => string),
  timeoutMs = WAIT_TIMEOUT_MS,
  intervalMs = 20,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (performance.now() > deadline) {
      const awaited = typeof what === "function" ? what() : (what ?? String(probe));
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${awaited}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
