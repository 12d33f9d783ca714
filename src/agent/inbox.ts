/**
 * Text waiting to join the conversation at the next model call: messages
 * that steer a running turn, and (through the loop) background-task
 * notifications. One path for both, so a steer and a notification that
 * arrive together reach the model together.
 */
export class Inbox {
  #texts: string[] = [];
  #listeners = new Set<() => void>();

  push(text: string): void {
    this.#texts.push(text);
    for (const listener of this.#listeners) listener();
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

  /** Called whenever something is pushed (used to wake an idle session). */
  onPush(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
