/**
 * Text waiting to join the conversation at the next model call: messages
 * that steer a running turn, and (through the loop) background-task
 * notifications. One path for both, so a steer and a notification that
 * arrive together reach the model together.
 */
export class Inbox {
  #texts: string[] = [];

  push(text: string): void {
    this.#texts.push(text);
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
