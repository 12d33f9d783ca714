/**
 * Ends a one-shot command's process the moment its event loop is empty, without Node's teardown.
 * A natural exit, once nothing is left to wait for (every child reaped, every write flushed,
 * every handle closed), emits `exit` and then frees the whole environment and V8 heap, which
 * took a one-shot `rudder run` 40-90 ms between its result line and its end on a busy machine
 * (bench/startup.ts). `process.exit` at `beforeExit` waits for exactly the same things, runs
 * the same `exit` listeners (process groups killed, the sandbox's folder removed), and leaves
 * the memory to the kernel.
 */
export function exitWithoutTeardown(): void {
  process.once("beforeExit", () => process.exit());
}
