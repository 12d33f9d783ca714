import type { AttachedImage } from "./attached-images.js";
import { SaidText, withSaid } from "./said-text.js";
import type { ResultLine, TurnResult } from "./turn-result.js";

/**
 * Which of the messages written into one turn the CLI has answered.
 *
 * The CLI folds a message written while a tool runs into the running turn (one `result`
 * naming both uuids in `user_message_uuids`) but queues one written while the model streams
 * as the next turn (a second `result`). A turn is complete only when every message written
 * into it is answered, so a late `result` is never mistaken for the next turn's. Answers are
 * read from `user_message_uuids` when present, else from `command_lifecycle` `started`
 * states, else one message per `result`.
 */
export class TurnState {
  /** Every message written into the turn, in order; the first is the turn's own. */
  readonly #uuids: string[] = [];
  /** Raw (unwrapped) texts by uuid, for re-sending after a fresh start and for re-dispatch. */
  readonly #texts = new Map<string, string>();
  /** The images of each message that has some, by uuid, for re-sending after a fresh start. */
  readonly #images = new Map<string, readonly AttachedImage[]>();
  readonly #steered = new Set<string>();
  readonly #started = new Set<string>();
  readonly #answered = new Set<string>();
  readonly #cancelled = new Set<string>();
  /** Who waits to hear that the CLI started on a message, by uuid; each called once. */
  readonly #onStarted = new Map<string, () => void>();
  /** Who takes a message's own answer before the turn ends (see `takeEarlyAnswer`), by uuid. */
  readonly #onAnswered = new Map<string, (result: TurnResult) => void>();
  /** The messages the last kept `result` answered. */
  #lastAnswers: string[] = [];
  readonly results: ResultLine[] = [];
  intermediateCount = 0;
  /** What the model said since the last `result`. */
  readonly #said = new SaidText();

  addMessage(
    uuid: string,
    text: string,
    steered: boolean,
    callbacks: {
      onStarted?: (() => void) | undefined;
      onAnswered?: ((result: TurnResult) => void) | undefined;
      images?: readonly AttachedImage[] | undefined;
    } = {},
  ): void {
    this.#uuids.push(uuid);
    this.#texts.set(uuid, text);
    if (callbacks.images?.length) this.#images.set(uuid, callbacks.images);
    if (steered) this.#steered.add(uuid);
    if (callbacks.onStarted) this.#onStarted.set(uuid, callbacks.onStarted);
    if (callbacks.onAnswered) this.#onAnswered.set(uuid, callbacks.onAnswered);
  }

  /** The CLI started on the message `uuid`, or on every message written so far (no uuid). */
  noteStarted(uuid?: string): void {
    for (const [each, onStarted] of [...this.#onStarted]) {
      if (uuid !== undefined && each !== uuid) continue;
      this.#onStarted.delete(each);
      onStarted();
    }
  }

  /** Forgets a message whose write failed; it never reached the CLI. */
  removeMessage(uuid: string): void {
    const index = this.#uuids.indexOf(uuid);
    if (index !== -1) this.#uuids.splice(index, 1);
    this.#texts.delete(uuid);
    this.#images.delete(uuid);
    this.#steered.delete(uuid);
    this.#onStarted.delete(uuid);
    this.#onAnswered.delete(uuid);
  }

  /** Messages to write again, in order, to a process that had to start a fresh session. */
  messages(): { uuid: string; text: string; images: readonly AttachedImage[] | undefined }[] {
    return this.#uuids.map((uuid) => ({
      uuid,
      text: this.#texts.get(uuid) ?? "",
      images: this.#images.get(uuid),
    }));
  }

  noteLifecycle(uuid: string, state: string): void {
    if (!this.#texts.has(uuid)) return;
    if (state === "started") {
      this.#started.add(uuid);
      this.noteStarted(uuid);
    }
    if (state === "cancelled") this.#cancelled.add(uuid);
  }

  /** A text the model said (a top-level assistant text block), for the next result's answer. */
  noteSaid(text: string, messageId: unknown): void {
    this.#said.add(text, messageId);
  }

  /**
   * Records a `result` line. Returns false for a result that answers none of this turn's
   * messages (it is then not kept). A successful result is kept with everything the model said
   * since the last one as its text (the CLI's `result` is only the last text block, so an
   * answer given before a tool call or before a steered message was read would be lost).
   */
  addResult(line: ResultLine, lifecycleSeen: boolean): boolean {
    const said = this.#said.take();
    const named = Array.isArray(line.user_message_uuids)
      ? line.user_message_uuids.filter((uuid): uuid is string => typeof uuid === "string")
      : undefined;
    const open = this.#uuids.filter((uuid) => !this.#answered.has(uuid));
    let answers: string[];
    if (named && named.length > 0) {
      answers = named.filter((uuid) => this.#texts.has(uuid));
    } else if (lifecycleSeen) {
      answers = open.filter((uuid) => this.#started.has(uuid));
      if (answers.length === 0) answers = open.slice(0, 1);
    } else {
      answers = open.slice(0, 1);
    }
    if (answers.length === 0) return false;
    for (const uuid of answers) this.#answered.add(uuid);
    this.#lastAnswers = answers;
    this.results.push(withSaid(line, said));
    return true;
  }

  /**
   * After `addResult`, while the turn is not complete: hands the last result to the callers
   * of the messages it answered, as their own answer, and drops it from the turn's results
   * (the turn's final result then covers only what came after). It is kept in the turn when
   * it is an error (the turn's end decides what an error means: a rate limit defers all of
   * it), and when any message it answered has no `onAnswered` (that caller expects the
   * combined result). Returns whether it was handed out.
   */
  takeEarlyAnswer(build: (line: ResultLine) => TurnResult): boolean {
    const line = this.results.at(-1);
    if (line === undefined || line.is_error === true || this.complete()) return false;
    const takers = this.#lastAnswers.map((uuid) => this.#onAnswered.get(uuid));
    if (takers.length === 0 || takers.some((taker) => taker === undefined)) return false;
    this.results.pop();
    const result = build(line);
    for (const uuid of this.#lastAnswers) this.#onAnswered.delete(uuid);
    for (const taker of takers) taker?.(result);
    return true;
  }

  complete(): boolean {
    return this.#uuids.every((uuid) => this.#answered.has(uuid) || this.#cancelled.has(uuid));
  }

  /** Steered texts not answered (cancelled, or lost with the process), for re-dispatch. */
  unansweredSteers(): string[] {
    return this.#uuids
      .filter((uuid) => this.#steered.has(uuid) && !this.#answered.has(uuid))
      .map((uuid) => this.#texts.get(uuid) ?? "");
  }
}
