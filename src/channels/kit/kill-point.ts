/**
 * Crash tests' hook: with `RUDDER_TEST_KILL_AT=<point>` in its environment, the process kills
 * itself (SIGKILL, nothing flushed, no handler run) when it reaches that named point, so a test
 * can place a crash inside a window between two writes that no outside timing hits reliably.
 * Without the variable (always, outside tests) a point does nothing.
 *
 * The points: `message-stored` (a chat message in the store, before its source hears it is
 * taken) and `reply-stored` (an answer in the store, before the reply ledger records it).
 */
export function killPoint(point: "message-stored" | "reply-stored"): void {
  if (process.env.RUDDER_TEST_KILL_AT === point) process.kill(process.pid, "SIGKILL");
}
