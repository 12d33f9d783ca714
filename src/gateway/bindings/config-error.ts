/** A configuration file the gateway refuses: one line naming the file and what is wrong. */
export class ConfigError extends Error {
  readonly file: string;

  constructor(file: string, problem: string, options?: { cause?: unknown }) {
    super(`${file}: ${problem}`, options);
    this.name = "ConfigError";
    this.file = file;
  }
}
