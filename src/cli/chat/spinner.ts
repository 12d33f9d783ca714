/** ASCII frames: the source stays ASCII and every terminal can draw them. */
const FRAMES = ["|", "/", "-", "\\"] as const;

/** How often the spinner redraws. */
export const SPINNER_INTERVAL_MS = 100;

/** `4.2s` under a minute, `3m05s` above. */
export function formatElapsed(milliseconds: number): string {
  const tenths = Math.floor(Math.max(0, milliseconds) / 100);
  if (tenths < 600) return `${Math.floor(tenths / 10)}.${tenths % 10}s`;
  const seconds = Math.floor(tenths / 10);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
}

export function spinnerFrame(elapsedMs: number): string {
  const index = Math.floor(Math.max(0, elapsedMs) / SPINNER_INTERVAL_MS) % FRAMES.length;
  return FRAMES[index] ?? "|";
}

/**
 * A label with a turning frame and the time since it started, e.g.
 * `/ thinking 2.3s`. It draws nothing itself: every tick it hands its text
 * to `onTick`, so the caller decides where (and whether) it appears. The
 * timer is unref()ed, so a spinner never keeps the process alive.
 */
export class Spinner {
  readonly #onTick: (text: string) => void;
  #label: string | undefined;
  #startedAt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(onTick: (text: string) => void) {
    this.#onTick = onTick;
  }

  get active(): boolean {
    return this.#label !== undefined;
  }

  /** What the spinner says it is waiting for, or undefined when stopped. */
  get label(): string | undefined {
    return this.#label;
  }

  /** Starts (or relabels and restarts) the spinner and draws it once at once. */
  start(label: string): void {
    this.#label = label;
    this.#startedAt = Date.now();
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), SPINNER_INTERVAL_MS);
      this.#timer.unref();
    }
    this.#tick();
  }

  stop(): void {
    this.#label = undefined;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The current text, or "" when stopped. */
  text(): string {
    if (this.#label === undefined) return "";
    const elapsed = Date.now() - this.#startedAt;
    return `${spinnerFrame(elapsed)} ${this.#label} ${formatElapsed(elapsed)}`;
  }

  #tick(): void {
    if (this.#label !== undefined) this.#onTick(this.text());
  }
}
