import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The next `getUpdates` offset of one bot, kept in a file so that an update
 * whose message was stored is not taken again after a crash (Telegram only
 * forgets an update once a later poll confirms it). Named by the bot's id:
 * update ids are per bot, and another bot's offset would make Telegram drop
 * this one's updates. Failures are data: reading gives undefined, writing
 * gives the error, and polling goes on either way.
 */
export class OffsetFile {
  readonly #path: string;

  constructor(folder: string, botId: number) {
    this.#path = join(folder, `telegram-${botId}.offset`);
  }

  read(): number | undefined {
    try {
      const value = Number(readFileSync(this.#path, "utf8").trim());
      return Number.isSafeInteger(value) && value > 0 ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Replaces the file whole (write, then rename), so a crash leaves the old offset or the new. */
  write(offset: number): Error | undefined {
    const partial = `${this.#path}.${process.pid}.tmp`;
    try {
      writeFileSync(partial, `${offset}\n`, { mode: 0o600 });
      renameSync(partial, this.#path);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }
}
