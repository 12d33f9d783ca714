/**
 * Text waiting to join the conversation at the next model call: messages
 * that steer a running turn, and (through the loop) background-task
 * notifications. One path for both, so a steer and a notification that
 * arrive together reach the model together.
 */
import type { ImageBlock } from "../model/types.js";

export class Inbox {
  #texts: string[] = [];
  #images: ImageBlock[] = [];

  /** Queues a text, with the images that came with it (a steer with a photo). */
  push(text: string, images: readonly ImageBlock[] = []): void {
    this.#texts.push(text);
    this.#images.push(...images);
  }

  /** The images queued with the texts, oldest first; none are kept afterwards. */
  drainImages(): ImageBlock[] {
    const images = this.#images;
    this.#images = [];
    return images;
  }

  /** Everything queued, oldest first; the inbox is empty afterwards. */
  drain(): string[] {
    const texts = this.#texts;
    this.#texts = [];
    return texts;
  }

  get size(): number {
    return this.#texts.length;
  }
}
