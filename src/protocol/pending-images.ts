/**
 * The images of user messages on their way to the session: a message may wait (held until
 * the session is ready, queued behind a command, carried to the next turn) as its text, and
 * its images are taken again by that text when it is sent.
 */
import type { ImageBlock } from "../model/types.js";

export class PendingImages {
  readonly #byText = new Map<string, ImageBlock[][]>();

  put(text: string, images: readonly ImageBlock[]): void {
    if (images.length === 0) return;
    const waiting = this.#byText.get(text) ?? [];
    waiting.push([...images]);
    this.#byText.set(text, waiting);
  }

  /** The images of the oldest message with this text (none if it had none). */
  take(text: string): ImageBlock[] {
    const waiting = this.#byText.get(text);
    if (!waiting) return [];
    const images = waiting.shift() ?? [];
    if (waiting.length === 0) this.#byText.delete(text);
    return images;
  }
}
