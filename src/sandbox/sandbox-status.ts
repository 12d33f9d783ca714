/** For `system/init` and the start-up line: `on`, `off` (disabled), `unavailable` (and why). */
export type SandboxStatus =
  | { state: "on" }
  | { state: "off" }
  | { state: "unavailable"; reason: string };

/** The one line saying the sandbox is off for want of bubblewrap, and what happens instead. */
export function unavailableLine(reason: string, failIfUnavailable: boolean): string {
  return failIfUnavailable
    ? `the sandbox is unavailable (${reason}) and sandbox.failIfUnavailable is set: bash commands are refused`
    : `the sandbox is unavailable (${reason}): bash commands run unconfined, and ask unless known read-only`;
}
