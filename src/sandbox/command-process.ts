/** What a started command reports; the same for a plain child and one run by a sandbox's runner. */
export interface CommandHandlers {
  /** A chunk of stdout (`1`) or stderr (`2`), in arrival order. */
  onData(stream: 1 | 2, chunk: Buffer): void;
  /** The shell has exited; output may still follow until `onClose`. */
  onExit(code: number | null, signal: string | null): void;
  /** It could not start, or its sandbox broke: `message` says why. `onClose` follows. */
  onError(message: string): void;
  /** Its output is over. Called once, last. */
  onClose(): void;
}

/** A started command, whose whole process group rudder can end. */
export interface CommandProcess {
  /** Kills the command's process group: SIGTERM, then SIGKILL after a grace period. Safe to call again. */
  terminate(): void;
}
