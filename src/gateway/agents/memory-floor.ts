/**
 * `rudder serve --min-free-memory SIZE`: the memory the machine keeps free. `MemAvailable` of
 * /proc/meminfo is read every `checkEveryMs` (default 2 s; asynchronously, after one read at
 * start); while it is below the floor the pool starts no new agent process (turns wait) and
 * idle agents are stopped, least recently used first, one at a time (process-pool.ts). Each
 * reading while short, and the reading that ends a shortage, calls `onReading`. The file read
 * can be another one (`meminfoFile`), for tests only: they write a fake meminfo rather than use
 * up the machine's memory.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { byteSize } from "../../tools/byte-size.js";

export interface MemoryFloorOptions {
  minFreeBytes: number;
  /** For tests only: a file in /proc/meminfo's format read instead of it. */
  meminfoFile?: string;
  checkEveryMs?: number;
  /** Called after each reading while short, and once when a shortage ends. */
  onReading?: () => void;
}

/** `MemAvailable` in bytes, or undefined when the text does not say. */
export function availableBytes(meminfo: string): number | undefined {
  const kilobytes = /^MemAvailable:\s+(\d+)\s+kB/m.exec(meminfo)?.[1];
  return kilobytes === undefined ? undefined : Number(kilobytes) * 1024;
}

/** `2G`, `512M`, `1.5g`, `300000000`: bytes (K, M, G, T in powers of 1024); undefined if not a size. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?$/i.exec(text.trim());
  if (match === null) return undefined;
  const unit = (match[2] ?? "B").toUpperCase()[0] as string;
  const power = "BKMGT".indexOf(unit);
  return Math.round(Number(match[1]) * 1024 ** power);
}

export class MemoryFloor {
  readonly minFreeBytes: number;
  readonly #file: string;
  readonly #onReading: (() => void) | undefined;
  readonly #timer: NodeJS.Timeout;
  #available: number | undefined;
  #reading = false;

  constructor(options: MemoryFloorOptions) {
    this.minFreeBytes = options.minFreeBytes;
    this.#file = options.meminfoFile ?? "/proc/meminfo";
    this.#onReading = options.onReading;
    try {
      // One small procfs file, once, so the first turn already knows.
      this.#available = availableBytes(readFileSync(this.#file, "utf8"));
    } catch {
      this.#available = undefined;
    }
    this.#timer = setInterval(() => void this.check(), options.checkEveryMs ?? 2000);
    this.#timer.unref();
  }

  /** The last reading of `MemAvailable`; undefined when it could not be read (never short then). */
  get available(): number | undefined {
    return this.#available;
  }

  short(): boolean {
    return this.#available !== undefined && this.#available < this.minFreeBytes;
  }

  /** Why new agents wait, as a line: the memory available and the floor. */
  describe(): string {
    return `memory is short: ${byteSize(this.#available ?? 0)} available, below the floor of ${byteSize(this.minFreeBytes)} (--min-free-memory)`;
  }

  /** Reads the file again now (the pool asks once an agent is gone). */
  async check(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    const wasShort = this.short();
    try {
      this.#available = availableBytes(await readFile(this.#file, "utf8"));
    } catch {
      this.#available = undefined;
    } finally {
      this.#reading = false;
    }
    if (this.short() || wasShort) this.#onReading?.();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
