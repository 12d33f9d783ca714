/**
 * Ends a one-shot command's process without Node's teardown. A natural exit, once nothing is
 * left to wait for (every child reaped, every handle closed), emits `exit` and then frees the
 * whole environment and V8 heap, which took a one-shot `rudder run` 40-90 ms between its result
 * line and its end on a busy machine (bench/startup.ts). `process.exit` runs the same `exit`
 * listeners (process groups killed, the sandbox's folder removed) and leaves the memory to the
 * kernel.
 */

/** At `beforeExit` (the event loop has emptied): `process.exit()`, for any way the command ends. */
export function exitWithoutTeardown(): void {
  process.once("beforeExit", () => process.exit());
}

/**
 * Once the command has resolved (its result written; its session, tools and sandbox closed):
 * `process.exit(code)` as soon as stdout and stderr have flushed. Nothing the command owns is
 * left then but the processes the sandbox has just killed, whose reaping and closing pipes a
 * natural exit would wait for (20-60 ms on a busy machine, bench/startup.ts).
 */
export async function exitWhenFlushed(code: number): Promise<never> {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

/** Resolves once what was written to `stream` has been handed to the system (at once if nothing waits). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.writableLength === 0 || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => stream.write("", () => resolve()));
}
