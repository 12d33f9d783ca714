/**
 * The streams and environment every subcommand is handed instead of touching `process`, so a
 * test drives a command with its own streams. Its own module so subcommands need not import
 * `run.ts` (nor each other) to name it.
 */
export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}
